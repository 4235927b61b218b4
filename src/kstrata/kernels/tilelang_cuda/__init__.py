"""Initial TileLang candidates in GPU form (``T.Parallel``, fragments, ``T.reduce_*``,
SIMT tiles in shared memory), one per task that has a CPU form in ``../tilelang``;
the ``tilelang-cuda`` backend starts from these (see :mod:`kstrata.kernels`)."""
