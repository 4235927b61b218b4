"""Same-kernel A/A timing: the timer must report no speedup where there is none.

For every suite task (PyTorch eager reference on CPU) at a shape where one call
takes about 1-20 ms, time the *same* callable as candidate and baseline with
:func:`kstrata.measure.timing.measure` (interleaved, flushed, rotating inputs,
bootstrap CI). A trustworthy timer reports speedup 1.00; the claim checked
here is ``|median over the suite of the A/A speedup - 1| <= 3%``.

Usage::

    .venv/bin/python benchmarks/timing_noise.py [--budget-ms 1000] [--tasks a,b] \
        [--out benchmarks/results/timing_noise.txt]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import torch  # noqa: E402

from kstrata.measure import environment, roofline  # noqa: E402
from kstrata.measure.timing import TimingConfig, measure  # noqa: E402
from kstrata.tasks.loader import suite  # noqa: E402

LOW_MS, HIGH_MS = 1.0, 5.0  # within the 1-20 ms band; short calls pair better
CLAIM = 0.03


def one_call_ms(model, inputs) -> float:
    """Best of three calls after a warm one, ms."""
    best = float("inf")
    with torch.inference_mode():
        model(*inputs)
        for _ in range(3):
            t0 = time.perf_counter()
            model(*inputs)
            best = min(best, (time.perf_counter() - t0) * 1e3)
    return best


def pick_shape(task, ceil):
    """Halve the largest shape variable until one eager call takes at most
    HIGH_MS (shapes whose roofline floor already exceeds it are not run);
    returns (shape, model, inputs, ms)."""
    shape = task.nominal_shape
    for _ in range(40):
        floor = roofline.floor_ms(task.flops(shape), task.bytes(shape), ceil)
        if floor is None or floor < HIGH_MS:
            model, inputs, _, _ = task.instantiate(shape, seed=0)
            ms = one_call_ms(model, inputs)
            if ms <= HIGH_MS:
                return shape, model, inputs, ms
        name = max(shape, key=shape.get)
        if shape[name] <= 1:
            break
        shape = {**shape, name: shape[name] // 2}
    raise RuntimeError(f"no shape with a call under {HIGH_MS} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget-ms", type=float, default=1500.0)
    ap.add_argument("--tasks", default="")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    environment.fix_threads(args.threads)
    ceil = roofline.ceilings("cpu", "float32")
    wanted = set(args.tasks.split(",")) if args.tasks else None
    cfg = TimingConfig(budget_ms=args.budget_ms, threads=args.threads)
    lines = []

    def emit(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    v = environment.versions()
    emit("kstrata timing_noise: same-kernel A/A speedup (should be 1.00)")
    emit(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    emit(f"device: {environment.device_name('cpu')}, {torch.get_num_threads()} threads, "
         f"governor {environment.cpu_governor()}")
    emit("versions: " + ", ".join(f"{k} {val}" for k, val in v.items()))
    emit(f"method: interleaved A B pairs, {cfg.budget_ms:.0f} ms budget, flush {cfg.flush}, "
         f"rel-IQR re-measure > {cfg.rel_iqr_threshold}, up to {cfg.max_remeasure}x doubling; "
         f"speedup = median paired ratio, {cfg.n_resamples}-resample percentile bootstrap "
         f"{int(cfg.confidence * 100)}% CI")
    emit()
    emit(f"{'task':26} {'shape':38} {'ms':>8} {'pairs':>5} {'A/A':>7} {'95% CI':>17} {'remeas':>6}")
    speedups = []
    skipped = []
    for task in suite():
        if wanted and task.name not in wanted:
            continue
        try:
            shape, model, inputs, _ = pick_shape(task, ceil)
        except Exception as e:  # noqa: BLE001 - report and go on
            skipped.append(f"{task.name}: {type(e).__name__}: {e}"[:120])
            continue
        m = measure(model, inputs, model, cfg, labels={"candidate": "A", "baseline": "A"})
        s = m.speedup
        speedups.append(s.point)
        shape_txt = ",".join(f"{k}={val}" for k, val in shape.items())
        emit(f"{task.name:26} {shape_txt[:38]:38} {m.candidate.median:8.3f} {m.reps:5d} "
             f"{s.point:7.4f} [{s.low:.4f}, {s.high:.4f}] {m.remeasured:6d}"
             + ("  noisy" if m.noisy else ""))
    emit()
    if not speedups:
        emit("no task measured")
        return 1
    med = statistics.median(speedups)
    within = sum(abs(x - 1) <= CLAIM for x in speedups)
    emit(f"tasks measured: {len(speedups)}; skipped: {len(skipped)}")
    for s in skipped:
        emit(f"  skipped {s}")
    emit(f"median A/A speedup over the suite: {med:.4f} (claim: within 1 +- {CLAIM:.0%}) -> "
         f"{'PASS' if abs(med - 1) <= CLAIM else 'FAIL'}")
    emit(f"tasks individually within +-{CLAIM:.0%}: {within}/{len(speedups)}; "
         f"min {min(speedups):.4f}, max {max(speedups):.4f}")
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0 if abs(med - 1) <= CLAIM else 1


if __name__ == "__main__":
    sys.exit(main())
