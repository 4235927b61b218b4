import ctypes, glob, os
import torch

BITS = 16
lib = ctypes.CDLL(None, use_errno=True)
# a large file of the environment that no process maps (a mapped page is not evicted): a static library
path = max(glob.glob(os.path.dirname(torch.__file__) + "/../triton/backends/nvidia/lib/*/*.a")
           or glob.glob(os.path.dirname(torch.__file__) + "/lib/*.so*"), key=os.path.getsize)
fd = os.open(path, os.O_RDONLY)
base = (os.path.getsize(path) * 2 // 3) // 4096 * 4096
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no readahead around a page read


class _Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class _Stat(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("cache", "dirty", "writeback", "evicted", "recently_evicted")]


def cached(i):
    r, s = _Range(base + 4096 * i, 4096), _Stat()
    if lib.syscall(451, fd, ctypes.byref(r), ctypes.byref(s), 0) == 0:  # cachestat
        return bool(s.cache)
    try:
        os.preadv(fd, [bytearray(64)], base + 4096 * i, os.RWF_NOWAIT)
        return True
    except BlockingIOError:
        return False
