"""How many nvcc runs does verifying a tvm-cuda start take, with and without reusing a text already compiled?

On the CPU (TVM's CUDA code generation and nvcc; no GPU needed), in the repository root:
    python benchmarks/tvm_cuda_build_count.py [--tasks relu,rmsnorm,softmax,cross_entropy] [--time relu] [--shapes 6]

For each task's tvm-cuda start (``initial_sources``) at the shapes the verifier builds (small,
sweep, and the hidden plan of a fixed secret: perturbed, size-1, octave), the CUDA C of the normal
build and of poison builds 1 and 2 (``build.build_module(poison=...)``, code generation only), and
how many distinct texts they are: ``build.nvcc_compile`` compiles each distinct text once per
process. ``--time``: for those tasks, at the first ``--shapes`` shapes, the wall time of nvcc over
every build (one run each, as before the reuse) and through ``nvcc_compile`` (sequential, one
thread, a fresh cache).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

SECRET = "s3cret"


def verifier_shapes(task):
    """The small, sweep and hidden shapes (full form, each once) for :data:`SECRET`."""
    from kstrata.verify import plan

    base = task.sweep_shapes
    extra = plan.perturbed_shapes(task, SECRET, base=base)
    tests = plan.hidden_tests(task, SECRET, extra, base=[])
    tests += plan.unit_tests(task, SECRET, base, extra) + plan.octave_tests(task, SECRET, base, extra)
    out = []
    for s in [*task.small_shapes, *base, *[t.shape_dict for t in tests]]:
        s = task.full_shape(s)
        if s not in out:
            out.append(s)
    return out


def texts(backend, task, shapes):
    """CUDA C of the normal build and poison builds 1, 2 at each of ``shapes``."""
    from kstrata.backends.tvm import build as tb

    src, out = backend.initial_sources(task), []
    for s in shapes:
        _, funcs, _, _ = backend.scheduled_funcs(task, src, s)
        for p in (0, 1, 2):
            with tb.codegen_only(backend.target()):
                out.append(tb.generated_source(tb.build_module(funcs, backend.target(), poison=p), "cuda"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default="relu,rmsnorm,softmax,cross_entropy")
    ap.add_argument("--time", default="relu")
    ap.add_argument("--shapes", type=int, default=6)
    args = ap.parse_args()

    from kstrata.backends.registry import get_backend
    from kstrata.backends.tvm import build as tb
    from kstrata.tasks.loader import resolve_task

    cuda = get_backend("tvm-cuda")
    for name in args.tasks.split(","):
        task = resolve_task(name)
        all_texts = texts(cuda, task, verifier_shapes(task))
        print(f"{name}: {len(all_texts) // 3} shapes, {len(all_texts)} builds, {len(set(all_texts))} distinct CUDA "
              f"texts (nvcc runs with reuse)", flush=True)
    for name in [n for n in args.time.split(",") if n]:
        task = resolve_task(name)
        some = texts(cuda, task, verifier_shapes(task)[:args.shapes])
        t0 = time.perf_counter()
        for code in some:
            tb._run_nvcc(tb.nvcc_path(), code, "sm_90", "ptx", 300)
        before = time.perf_counter() - t0
        tb._NVCC_DONE.clear()
        t0 = time.perf_counter()
        for code in some:
            tb.nvcc_compile(code)
        after = time.perf_counter() - t0
        print(f"{name} at {args.shapes} shapes: {len(some)} builds; nvcc per build {before:.1f} s, "
              f"reusing texts ({len(set(some))} runs) {after:.1f} s", flush=True)


if __name__ == "__main__":
    main()
