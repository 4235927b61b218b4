# Primitives (appended to common.py by tests/sandbox/test_rt90_sandbox_page_cache.py): pages 0-7 read (cached),
# the even ones advised DONTNEED (the writer's 0 before rt90), then each clean read or eviction of rt88 tried on
# page 1; what each returned (errno on failure) is the load error. The host then looks whether pages 0, 2, 4, 6
# are still cached.
libc = lib
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.syscall.restype = ctypes.c_long
for i in range(8):
    os.pread(fd, 64, base + 4096 * i)
res = {"fadvise": [os.posix_fadvise(fd, base + 4096 * i, 4096, os.POSIX_FADV_DONTNEED) for i in (0, 2, 4, 6)]}
page = libc.mmap(None, 4096, 1, 1, fd, base + 4096)  # PROT_READ, MAP_SHARED: page 1


class _Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def call(f, *a):
    ctypes.set_errno(0)
    r = f(*a)
    return 0 if r == 0 else -ctypes.get_errno()


res["cachestat"] = call(libc.syscall, 451, fd, ctypes.byref(_Range(base + 4096, 4096)), ctypes.byref(_Stat()), 0)
res["mincore"] = call(libc.mincore, ctypes.c_void_p(page), 4096, ctypes.create_string_buffer(1))
res["madvise_cold"] = call(libc.madvise, ctypes.c_void_p(page), 4096, 20)
res["madvise_pageout"] = call(libc.madvise, ctypes.c_void_p(page), 4096, 21)
res["madvise_dontneed"] = call(libc.madvise, ctypes.c_void_p(page), 4096, 4)  # allocators' advice: allowed
pidfd = libc.syscall(434, os.getpid(), 0)  # pidfd_open
res["process_madvise"] = call(libc.syscall, 440, pidfd, ctypes.byref(_Iovec(page, 4096)), 1, 21, 0)
res["io_setup"] = call(libc.syscall, 206, 1, ctypes.byref(ctypes.c_ulong(0)))
for name, flags in (("preadv2_nowait", os.RWF_NOWAIT), ("preadv2", 0)):
    try:
        res[name] = 0 * os.preadv(fd, [bytearray(64)], base + 4096, flags)
    except OSError as e:
        res[name] = -e.errno
raise RuntimeError(f"RES {res!r} FILE {path} {base}")
