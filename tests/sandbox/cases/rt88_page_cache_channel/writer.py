# Writer (appended to common.py by run.py): SECRET into BITS pages (read = 1, evicted = 0); then loads fine.
SECRET = 0xB5A3
for i in range(BITS):  # reads first (a read may bring its neighbours), then the evictions
    if SECRET >> i & 1:
        os.pread(fd, 64, base + 4096 * i)
for i in range(BITS):
    if not SECRET >> i & 1:
        os.posix_fadvise(fd, base + 4096 * i, 4096, os.POSIX_FADV_DONTNEED)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
