"""TVM backends: PyTorch reference -> Relax graph -> TensorIR schedule -> target code.

Modules: :mod:`.lower` (graph level), :mod:`.schedule` (schedule level),
:mod:`.build` (targets and the source level), :mod:`.runtime` (running kernels on
torch tensors), :mod:`.backend` (the registered backends), :mod:`.rules` (the
built-in schedule/graph proposer's rules), :mod:`.tune` (MetaSchedule),
:mod:`.frontend` (converters added to TVM's PyTorch importer).
TVM itself is imported lazily so this package imports without it.
"""

from kstrata.backends.tvm.backend import TVMBackend, TVMCUDABackend, TVMLLVMBackend, TVMOpenCLBackend

__all__ = ["TVMBackend", "TVMCUDABackend", "TVMLLVMBackend", "TVMOpenCLBackend"]
