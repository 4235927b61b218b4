"""How fast is each GPU schedule variant the built-in proposer makes from the tvm-cuda start? (issue #18)

On the lent nvidia-h200, in the repository root (torch 2.11 and TVM 0.27 carried at
/tmp/kst-tvm; kstrata is not installed, it is imported from ./src), at most ~250 s with the defaults:
    PYTHONPATH=/tmp/kst-tvm:$PWD/src:/tmp/kst-gos python3 benchmarks/tvm_cuda_variants.py \\
        [--tasks rmsnorm,softmax,layernorm,relu,fused_exp_mean] [--max-variants 0] \\
        [--task-seconds 40] [--reps 30] [--no-compile] [--dry-run] [--rewrites]

For each task, at its nominal shape, in this process (kstrata's own schedules, trusted: no
sandbox, no judge): builds the tvm-cuda initial candidate (``TVMCUDABackend.initial_sources``:
graph fused ``rows``, the default GPU schedule) and the GPU schedule variants of one schedule
expansion of it (``schedule_variants(..., gpu=True)``, as ``tvm_cuda_starts.py --expansion``
and the built-in proposer compute them), in the proposer's order; loads each (TVM build + nvcc),
checks its output against the task's PyTorch reference on the task's inputs (same weights,
``tvm_cuda_starts.check``: max error at most 1e-3 of the reference's magnitude) and times it
by CUDA graph replay (the median of ``--reps`` CUDA-event timings of one graph replay each,
after 10 warm-up replays: the GPU's time alone, ``tvm_cuda_starts._graph_ms``; where capture
fails, the per-call event time, marked ``~``). Eager PyTorch and ``torch.compile`` are the
baselines, timed the same way (``tvm_cuda_starts.baselines(graph=True)``), so ``x eager`` and
``x compile`` compare GPU time with GPU time (``tvm_cuda_starts.py`` compares per-call times).

Printed per task, one row per variant, sorted by ms (the fastest correct one marked ``*``):
``rank`` (the variant's position in the proposer's order, ``gpu_rules.gpu_variants``: the
built-in proposer evaluates ranks 1-4 in its first expansion of the start; ``-`` for the
start), ``rule`` (recipe), ``params`` (from the variant's description: ``t`` threads, ``v``
vector width, ``u`` unroll, ``shared`` = the row staged once in shared memory), ``check``,
``graph ms``, ``x start``, ``x eager``, ``x compile`` (> 1: the variant is faster) and GB/s
(``Task.bytes`` per call). Caps keep the whole run within ~250 s: at most ``--max-variants``
variants per task (the first in rank order; 0, the default: all) and no new variant once a
task's variants have taken ``--task-seconds`` (default 40; 0 = no cap); what was left untimed
is counted. A variant costs ~0.5 s (TVM build + nvcc, ~0.45 s per variant in
tvm_cuda_starts.txt's compiled expansions) plus its check and replays; rmsnorm, softmax and
layernorm have ~50 variants each, relu 10, fused_exp_mean 5; each ``torch.compile``
baseline takes ~5-15 s to compile.

``--rewrites``: before the start's variants, those of each graph rewrite that applies
(``graph_rules.rewrites``: cross_entropy's log-softmax + gather as one row PrimFunc, rmsnorm's
``x ** 2`` as ``x * x``): the rewritten graph with the default schedule (rank ``r0``, rule
``<rewrite>+start``), then its schedule variants (``r1``, ``r2``, ...; the built-in proposer
offers ``r1`` and ``r2`` with the rewrite ahead of its own schedule variants); ``x start`` is
still against the unrewritten start. ``--task-seconds`` then caps all of a task's rows.

``--dry-run`` needs no GPU: each variant is built for CUDA with code generation only
(``build.codegen_only``, no nvcc), the table printed without timings (check ``built``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import re
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for _p in (HERE.parent / "src", HERE):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import torch  # noqa: E402

from tvm_cuda_starts import _events_ms, _graph_ms, baselines, check, copy_bandwidth  # noqa: E402

TASKS = "rmsnorm,softmax,layernorm,relu,fused_exp_mean"

#: (pattern in a variant's description, params label) for the short params column
_PARAMS = ((r"dlight (\w+) schedule", "{}"), (r"one output per thread", "per_thread"),
           (r"a block per output", "cross"), (r"(\d+) threads|\((\d+) per block\)", "t{}"),
           (r"(\d+) (?:wide|elements per access)", "v{}"), (r"unroll (\d+)", "u{}"),
           (r"(\d+x\d+x\d+/\d+x\d+)", "{}"), (r"staged once in shared memory", "shared"))


def params(description: str) -> str:
    """A short form of a variant's parameters, read from its description
    (``row-wise ...: 256 threads ... 4 wide, unroll 0, the row staged once in shared
    memory ...`` -> ``t256 v4 u0 shared``)."""
    out = []
    for pat, label in _PARAMS:
        m = re.search(pat, description)
        if m:
            out.append(label.format(*(g for g in m.groups() if g is not None)))
    return " ".join(out) or description[:40]


def variants_of(backend: Any, task: Any, sources: dict[str, str], shape: dict[str, int]) -> list[Any]:
    """The GPU schedule variants of one expansion of ``sources``, in the proposer's order."""
    from kstrata.backends.tvm.rules import schedule_variants

    funcs = backend.lower(task, sources, shape).funcs
    return schedule_variants(funcs, sources["schedule"], gpu=True, target="cuda")


def codegen(backend: Any, task: Any, sources: dict[str, str], shape: dict[str, int]) -> str:
    """``built`` when ``sources`` schedule and generate CUDA C at ``shape`` (no nvcc), else why not."""
    from kstrata.backends.tvm import build as tb

    try:
        _, funcs, _, _ = backend.scheduled_funcs(task, sources, shape)
        with tb.codegen_only(backend.target()):
            tb.build_module(funcs, backend.target())
    except Exception as e:  # noqa: BLE001 - a variant that fails is a row
        return f"FAILED({type(e).__name__})"
    return "built"


def measure(backend: Any, task: Any, sources: dict[str, str], shape: dict[str, int], base: tuple,
            reps: int) -> tuple[str, float | None, bool]:
    """(check, ms, whether ms is a graph replay) of ``sources`` on the GPU."""
    inputs, init_inputs, ref_out, _, _ = base
    try:
        torch.manual_seed(1)  # the weights the reference drew
        fn = backend.load(task, sources, shape, init_inputs)
        with torch.no_grad():
            ok = check(fn(*inputs), ref_out)
            torch.cuda.synchronize()
            gms = _graph_ms(lambda: fn(*inputs), reps)
            if gms is not None:
                return ok, gms, True
            return ok, _events_ms(lambda: fn(*inputs), reps), False
    except Exception as e:  # noqa: BLE001 - a variant that fails is a row
        with contextlib.suppress(Exception):  # a kernel fault leaves the context broken
            torch.cuda.synchronize()
        return f"FAILED({type(e).__name__}: {str(e).splitlines()[0][:60] if str(e) else ''})", None, False


def expansions(backend: Any, task: Any, sources: dict[str, str], shape: dict[str, int],
               args: argparse.Namespace) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(header lines, [(rank, rule, sources[, variant])]): the start and its variants, and with
    ``--rewrites`` before them each graph rewrite's (``graph_rules.rewrites``): its graph with
    the default schedule (rank ``r0``), then its variants (``r1``, ``r2``, ...) in the order the
    built-in proposer offers them; each list capped at ``--max-variants``."""
    from kstrata.backends.tvm.graph_rules import rewrites

    head, rows = [], []
    graphs = [("", sources["graph"])]
    if args.rewrites:
        graphs = [(rule, g) for rule, g, _ in rewrites(sources["graph"], gpu=True)] + graphs
    for rule, graph in graphs:
        src = {**sources, "graph": graph}
        t0 = time.perf_counter()
        found = variants_of(backend, task, src, shape)
        todo = found[:args.max_variants] if args.max_variants else found
        left = f", {len(found) - len(todo)} past --max-variants not built" if len(todo) < len(found) else ""
        head.append(f"# {task.name} {shape} {f'graph rule {rule}' if rule else 'start'}: {len(found)} variants "
                    f"in {time.perf_counter() - t0:.1f} s (codegen only){left}")
        rows.append(("r0", f"{rule}+start", src) if rule else ("-", "start", src))
        rows += [(f"r{i}" if rule else str(i), f"{rule}+{v.rule}" if rule else v.rule, {**src, "schedule": v.text}, v)
                 for i, v in enumerate(todo, 1)]
    return head, rows


def task_rows(backend: Any, task: Any, args: argparse.Namespace) -> list[str]:
    """The printed rows of one task: baselines, the start and its variants (with
    ``--rewrites``, each graph rewrite's default schedule and variants before them)."""
    shape = task.full_shape(task.nominal_shape)
    sources = backend.initial_sources(task)
    head, todo = expansions(backend, task, sources, shape, args)
    todo.sort(key=lambda row: row[0] != "-")  # the start first: the 'x start' column's base
    base = None if args.dry_run else baselines(task, shape, args.reps, compile_=not args.no_compile,
                                                   graph=True)
    results = []  # (rank, rule, params, check, ms, graph)
    t0 = time.perf_counter()
    for n, (rank, rule, src, *v) in enumerate(todo):
        if n and args.task_seconds and time.perf_counter() - t0 > args.task_seconds:
            head.append(f"# {task.name}: {len(todo) - n} more variant(s) not timed (--task-seconds)")
            break
        par = params(v[0].description) if v else "default"
        if args.dry_run:
            results.append((rank, rule, par, codegen(backend, task, src, shape), None, False))
        else:
            results.append((rank, rule, par, *measure(backend, task, src, shape, base, args.reps)))
    start_ms = results[0][4]
    eager_ms, compile_ms = (base[3], base[4]) if base else (None, None)
    nbytes = task.bytes(shape) or 0
    best = min((r for r in results if r[3] == "ok" and r[4] is not None), key=lambda r: r[4], default=None)

    def ratio(a: float | None, b: float | None) -> str:
        return f"{a / b:.2f}" if a and b else "-"

    lines = []
    for r in sorted(results, key=lambda r: (r[4] is None, r[4] or 0.0)):
        rank, rule, par, ok, ms, graph = r
        ms_txt = "-" if ms is None else f"{ms:.4f}" + ("" if graph else "~")
        lines.append(f"{'*' if r is best else ' '} {task.name:<15}{rank:>5}  {rule:<28}{par:<26}{ok[:34]:<35}"
                     f"{ms_txt:>9}{ratio(start_ms, ms):>9}{ratio(eager_ms, ms):>9}{ratio(compile_ms, ms):>10}"
                     f"{f'{nbytes / ms / 1e6:.0f}' if ms else '-':>9}")
    if base:
        lines.append(f"  {task.name:<15}{'':>5}  {'eager':<28}{'':<26}{'':<35}{eager_ms:>9.4f}"
                     f"{ratio(start_ms, eager_ms):>9}{1.0:>9.2f}{ratio(compile_ms, eager_ms):>10}"
                     f"{nbytes / eager_ms / 1e6:>9.0f}")
        if compile_ms:
            lines.append(f"  {task.name:<15}{'':>5}  {'torch.compile':<28}{'':<26}{'':<35}{compile_ms:>9.4f}"
                         f"{ratio(start_ms, compile_ms):>9}{ratio(eager_ms, compile_ms):>9}{1.0:>10.2f}"
                         f"{nbytes / compile_ms / 1e6:>9.0f}")
    return head + lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default=TASKS)
    ap.add_argument("--reps", type=int, default=30, help="CUDA-event timings per median")
    ap.add_argument("--max-variants", type=int, default=0, help="variants per task, in rank order (0: all)")
    ap.add_argument("--task-seconds", type=float, default=40.0,
                    help="no new variant once a task's variants took this long (0: no cap)")
    ap.add_argument("--no-compile", action="store_true", help="no torch.compile baseline")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: code generation only, no timings")
    ap.add_argument("--rewrites", action="store_true",
                    help="before the start's variants, each graph rewrite's (graph_rules.rewrites): its "
                         "default schedule (rank r0), then its variants (r1, r2, ...)")
    args = ap.parse_args(argv)

    import tvm

    from kstrata.backends.registry import get_backend
    from kstrata.tasks.loader import resolve_task

    backend = get_backend("tvm-cuda")
    when = f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}"
    print(f"# tvm_cuda_variants {when}; torch {torch.__version__}; tvm {tvm.__version__}; "
          f"python {sys.version.split()[0]}; target {backend.target()}")
    if not args.dry_run:
        avail = backend.availability()
        if not avail.usable:
            print(f"# tvm-cuda is not usable here: {avail.reason} (--dry-run builds without a GPU)")
            sys.exit(1)
        print(f"# {torch.cuda.get_device_name(0)}; copy bandwidth {copy_bandwidth():.0f} GB/s "
              f"(256 MiB dst.copy_(src), read + write); graph ms: median of {args.reps} replays")
    print(f"# {'':<15}{'rank':>5}  {'rule':<28}{'params':<26}{'check':<35}{'graph ms':>9}{'x start':>9}"
          f"{'x eager':>9}{'x compile':>10}{'GB/s':>9}")
    t0 = time.perf_counter()
    for name in args.tasks.split(","):
        task = resolve_task(name.strip())
        try:
            rows = task_rows(backend, task, args)
        except Exception as e:  # noqa: BLE001 - one task's failure is a line, not the end
            rows = [f"# {name}: failed: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"]
        print("\n".join(rows), flush=True)
    print(f"# {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
