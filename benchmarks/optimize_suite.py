"""The built-in proposer over the level-1/level-2 suite on ``tvm-llvm``: speedup
against eager PyTorch and against MetaSchedule at equal measured trials, Fast@1.0.

Usage::

    python benchmarks/optimize_suite.py [--tasks a,b] [--sample N] [--seed S]
        [--evals E] [--task-wall SECONDS] [--out-dir DIR] [--deadline SECONDS]
        [--lanes N [--cpus-per-lane C] [--rows-dir DIR]] [--skip-done ROWS ...]
    python benchmarks/optimize_suite.py --merge ROWS [ROWS ...] [--report FILE]

For every task the search (:func:`kstrata.search.loop.optimize`, greedy policy,
``Budget(evaluations=E)``) runs the deterministic built-in proposer
(:class:`~kstrata.agents.builtin.TVMRulesProposer`, ``--tune-trials`` MetaSchedule
trials of its own, default 0) and a :class:`VerifyMeasureEvaluator` that times
every candidate against eager PyTorch at the timing shape (``--timing-shape``,
default ``fit``: :func:`kstrata.tasks.scaling.fitted_shape`, the nominal
GPU-sized shape halved to at most 0.25 GFLOP / 16 MB per call, since a 4096³
GEMM takes seconds per call on 2 cores). After the search, the best candidate
(which passed the full hidden verification sweep) is timed once more, paired
against MetaSchedule tuned with as many measured trials as the search
measured (its evaluations plus the proposer's own tuning trials), with the
standard 1 s timing budget. Per task it prints the speedups with their
bootstrap intervals, the verdict counts, candidates evaluated per minute and
where the time went (proposer, verification including compilation, timing).
At the end:
Fast@1.0 (EdgeKernelBench: the share of ALL run tasks whose result is correct
and faster than the MetaSchedule baseline; a task that failed counts as not
fast) and fast_1 against eager, each counting a task only when the speedup's
95% interval lies above 1 (the point estimate's count beside it). A task that errors is a row, never an abort.
``--task-wall`` (default 420 s) is a safety cap on one task's search wall clock;
tasks that hit it are marked. ``--deadline S``: no task starts after S seconds
from the start, so a run bounded in time ends with whole tasks only.

Parallel lanes (``--lanes N --cpus-per-lane C``, C default 2): the selected
tasks, biggest expected cost first (:data:`COST`), each go to the lane with the
least expected work so far; each of the N lanes is a subprocess of this script
(hidden ``--lane-json``) pinned to its own C CPUs (lane i: the CPUs
[iC, (i+1)C) of those this process may use). kstrata's workers and MetaSchedule's builders and runners inherit
that mask; ``TVM_BIND_THREADS=0`` keeps TVM's thread pool from re-pinning its
threads to CPUs 0..k-1 of the host, which it does by default whatever the
mask. Each lane appends one JSON line per finished task to its rows file in
``--rows-dir`` (flushed per task, so a killed run keeps its finished tasks);
the driver prints the per-task lines as rows arrive, then the report of all
rows. The lanes run concurrently on one host and share its memory bandwidth
and caches; both sides of each speedup are timed interleaved in the same lane,
so they see the same load. ``--merge`` prints the report of the rows of earlier
(possibly partial) runs; ``--skip-done`` leaves out the tasks that already have
a row there, so a run can be split over several calls.

The committed output is ``benchmarks/results/optimize_suite.txt``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kstrata.search.evaluators import VerifyMeasureEvaluator


@dataclass
class TimedEvaluator(VerifyMeasureEvaluator):
    """:class:`VerifyMeasureEvaluator` that records where its time goes.

    ``times`` accumulates seconds: ``evaluate`` (whole calls), ``timing:<baseline>``
    (paired timing calls; the first ``metaschedule`` call of a task includes the
    MetaSchedule tuning and is kept apart as ``tune+timing:metaschedule``).
    Verification (with compilation, in the worker) is ``evaluate`` minus timing.
    """

    times: dict[str, float] = field(default_factory=dict, init=False)
    calls: dict[str, int] = field(default_factory=dict, init=False)

    def _add(self, key: str, dt: float) -> None:
        self.times[key] = self.times.get(key, 0.0) + dt
        self.calls[key] = self.calls.get(key, 0) + 1

    def evaluate(self, task: Any, backend: Any, sources: dict[str, str]) -> tuple[Any, Any]:
        t0 = time.perf_counter()
        try:
            return super().evaluate(task, backend, sources)
        finally:
            self._add("evaluate", time.perf_counter() - t0)

    def _time(self, task: Any, backend: Any, sources: dict[str, str], baseline: str, **kwargs: Any) -> Any:
        key = f"timing:{baseline}"
        if baseline == "metaschedule" and not self.calls.get("tune+timing:metaschedule"):
            key = "tune+timing:metaschedule"
        t0 = time.perf_counter()
        try:
            return super()._time(task, backend, sources, baseline, **kwargs)
        finally:
            self._add(key, time.perf_counter() - t0)


def _speedup(node: Any, baseline: str) -> Any:
    if node is None or node.record.measurement is None:
        return None
    for s in node.record.measurement.speedups:
        if s.baseline == baseline:
            return s
    return None


def _fmt(s: Any) -> str:
    if s is None:
        return "-"
    if s.ci_low is not None and s.ci_high is not None:
        return f"{s.value:.2f} [{s.ci_low:.2f},{s.ci_high:.2f}]"
    return f"{s.value:.2f}"


@dataclass
class Final:
    """The final paired timing of the best candidate against MetaSchedule."""

    value: float
    ci_low: float | None
    ci_high: float | None
    candidate_ms: float
    baseline_ms: float
    noisy: bool


def final_vs_metaschedule(task: Any, backend: Any, pool: Any, sources: dict[str, str],
                          shape: dict[str, int], trials: int) -> Final:
    """Best candidate vs MetaSchedule (``trials`` trials), paired, 1 s timing budget, in the pool."""
    from kstrata.measure.timing import TimingConfig

    r = pool.call("kstrata.measure.candidate:time_candidate", backend.name, task, sources, shape,
                  baseline="metaschedule", trials=trials, config=TimingConfig(budget_ms=1000.0),
                  timeout_s=3600)
    if not r.ok:
        raise RuntimeError(f"{r.kind}: {r.error}")
    m = r.value
    return Final(m.speedup.point, m.speedup.low, m.speedup.high, m.candidate.median, m.baseline.median,
                 bool(m.noisy))


def run_task(task: Any, backend: Any, pool: Any, evals: int, wall: float, run_dir: Path,
             shape: dict[str, int], tune_trials: int) -> dict:
    """One search on ``task``, then the final timing against MetaSchedule;
    returns a row dict (``error`` set on failure)."""
    from kstrata.agents.builtin import TVMRulesProposer
    from kstrata.search.budget import Budget
    from kstrata.search.loop import SearchSettings, optimize

    row: dict[str, Any] = {"task": task.name, "level": task.meta.level, "category": task.meta.category,
                           "shape": shape}
    ev = TimedEvaluator(secret=os.urandom(16).hex(), baselines=("eager",), pool=pool, shape=shape)
    t0 = time.perf_counter()
    try:
        prop = TVMRulesProposer(backend, tune_trials=tune_trials)
        res = optimize(task, backend, prop, ev, policy="greedy",
                       budget=Budget(evaluations=evals, wall_clock_s=wall), run_dir=run_dir,
                       settings=SearchSettings(seed=0))
    except Exception as e:  # noqa: BLE001 - a failed task is a row
        row.update(error=f"{type(e).__name__}: {e}".splitlines()[0][:160],
                   trace=traceback.format_exc(limit=3), wall_s=time.perf_counter() - t0,
                   times=ev.times, calls=ev.calls)
        return row
    wall_s = time.perf_counter() - t0
    best = res.best
    n_eval = int(res.spent.get("evaluations", 0))
    tuned = tune_trials if any(n.record.role == "metaschedule" for n in res.tree) else 0
    trials = n_eval + tuned
    row.update(
        wall_s=wall_s, stop=res.stop_reason, n_eval=n_eval, trials=trials,
        verdicts=res.verdict_counts, best=best, eager=_speedup(best, "eager"),
        best_level=None if best is None else best.level, best_role=None if best is None else best.record.role,
        times=dict(ev.times), calls=dict(ev.calls), spent=res.spent, ms=None, ms_wall=0.0,
    )
    if best is not None:
        t1 = time.perf_counter()
        try:
            from kstrata.store.run_store import RunStore

            with RunStore.open(run_dir) as store:
                sources = store.sources(best.hash)
            row["ms"] = final_vs_metaschedule(task, backend, pool, sources, shape, trials)
        except Exception as e:  # noqa: BLE001 - a failed baseline is a row note
            row["ms_error"] = f"{type(e).__name__}: {e}".splitlines()[0][:160]
        row["ms_wall"] = time.perf_counter() - t1
    return row


_REPORT: list = []
T_START = time.monotonic()

#: Expected cost of a task, by category (relative search + MetaSchedule-baseline
#: wall time in the 10-task sample of ``benchmarks/results/optimize_suite.txt``);
#: level 2 adds 1. It only orders the lanes' work (biggest first).
COST = {"attention": 5, "conv": 3, "fusion": 2, "quant": 2, "matmul": 2, "pooling": 2}


def expected_cost(task: Any) -> int:
    return COST.get(task.meta.category, 1) + (task.meta.level == 2)


def out(*args: Any, **kwargs: Any) -> None:
    """Print a report line to stdout and, with ``--report``, append it to that file
    (MetaSchedule's own logging goes to stdout too; the report file stays clean)."""
    kwargs.pop("flush", None)
    print(*args, **kwargs, flush=True)
    if _REPORT:
        with open(_REPORT[0], "a") as f:
            print(*args, **kwargs, file=f)


def _fmt_final(f: Final | None) -> str:
    if f is None:
        return "-"
    ci = f" [{f.ci_low:.2f},{f.ci_high:.2f}]" if f.ci_low is not None else ""
    return f"{f.value:.2f}{ci}" + ("*" if f.noisy else "")


# -- rows as JSON lines ------------------------------------------------------

def row_to_json(row: dict) -> str:
    """One row as a JSON line: ``best`` becomes a bool, ``eager`` and ``ms`` plain numbers."""
    d = dict(row)
    if "best" in d:
        d["best"] = d["best"] is not None
    s = d.get("eager")
    if s is not None:
        d["eager"] = {k: None if getattr(s, k) is None else float(getattr(s, k))
                      for k in ("value", "ci_low", "ci_high")}
    if d.get("ms") is not None:
        d["ms"] = asdict(d["ms"])
    if "stop" in d:
        d["stop"] = f"{d['stop']}"
    if "verdicts" in d:
        d["verdicts"] = {f"{k}": n for k, n in d["verdicts"].items()}
    return json.dumps(d, default=lambda o: o.item() if hasattr(o, "item") else str(o))


def row_from_json(line: str) -> dict:
    d = json.loads(line)
    if "best" in d:
        d["best"] = True if d["best"] else None
    if d.get("eager") is not None:
        d["eager"] = SimpleNamespace(**d["eager"])
    if d.get("ms") is not None:
        d["ms"] = Final(**d["ms"])
    return d


def read_rows(paths: list[str]) -> list[dict]:
    """The rows of JSON-lines files (a torn last line, from a killed lane, is skipped)."""
    rows = []
    for p in paths:
        for line in Path(p).read_text().splitlines():
            try:
                rows.append(row_from_json(line))
            except ValueError:
                pass
    return rows


def task_line(row: dict) -> str:
    """The per-task result line printed after each task."""
    if row.get("error"):
        return f"#   ERROR after {row['wall_s']:.0f}s: {row['error']}"
    return (f"#   search {row['wall_s']:.0f}s, {row['n_eval']} evaluated, stop: {row['stop']}; "
            f"best vs eager {_fmt(row['eager'])}; vs MetaSchedule({row['trials']}) "
            f"{_fmt_final(row['ms'])}{'  ' + row['ms_error'] if row.get('ms_error') else ''} "
            f"({row['ms_wall']:.0f}s incl. tuning)")


# -- running tasks -----------------------------------------------------------

def run_tasks(args: Any, tasks: list, backend: Any, out_dir: Path, stamp: str) -> list[dict]:
    """Run ``tasks`` one after the other in this process (one worker pool), printing
    a line per task; with ``--lane-json`` each finished row is appended there."""
    from kstrata.backends.workers import pool_for
    from kstrata.measure.environment import cpu_name
    from kstrata.tasks.scaling import parse_shape_option

    rows: list[dict] = []
    sink = open(args.lane_json, "a") if args.lane_json else None
    pool = pool_for(backend)  # worker_env passes PYTHONPATH and TVM_BIND_THREADS on
    try:
        env: dict[str, Any] = {}
        if sink:
            cpus = pool.call("os:sched_getaffinity", 0)
            env = {"lane": os.environ.get("KSTRATA_LANE"), "cpus": sorted(os.sched_getaffinity(0)),
                   "worker_cpus": sorted(cpus.value) if cpus.ok else cpus.error, "host": cpu_name(),
                   "config": {k: getattr(args, k) for k in ("evals", "tune_trials", "timing_shape", "task_wall")}}
        for i, task in enumerate(tasks, 1):
            if args.deadline and time.monotonic() - T_START > args.deadline:
                out(f"# deadline {args.deadline:g}s passed: {len(tasks) - i + 1} tasks not started: "
                    + ", ".join(t.name for t in tasks[i - 1:]))
                break
            try:
                shape = parse_shape_option(args.timing_shape, task)
            except Exception as e:  # noqa: BLE001
                row = {"task": task.name, "level": task.meta.level, "category": task.meta.category,
                       "error": f"timing shape: {e}", "wall_s": 0.0}
            else:
                out(f"# [{i}/{len(tasks)}] {task.name} at {shape} ...", flush=True)
                row = run_task(task, backend, pool, args.evals, args.task_wall,
                               out_dir / f"{task.name}-{stamp}", shape, args.tune_trials)
                out(task_line(row), flush=True)
            line = row_to_json(dict(row, env=env) if sink else row)
            rows.append(row_from_json(line))
            if sink:
                sink.write(line + "\n")
                sink.flush()
    finally:
        pool.close()
        if sink:
            sink.close()
    return rows


def lscpu() -> dict[str, str]:
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in text.splitlines()) if v}


def run_lanes(args: Any, tasks: list, out_dir: Path, stamp: str) -> list[dict]:
    """Run ``tasks`` in ``args.lanes`` pinned subprocesses; print each task's line as
    its row arrives; return all rows. SIGTERM/SIGINT stop the lanes (finished rows kept)."""
    c = args.cpus_per_lane
    cpus = sorted(os.sched_getaffinity(0))
    if args.lanes * c > len(cpus):
        raise SystemExit(f"--lanes {args.lanes} x --cpus-per-lane {c} needs {args.lanes * c} CPUs; "
                         f"this process may use {len(cpus)}")
    plan: list[list] = [[] for _ in range(args.lanes)]
    for t in sorted(tasks, key=expected_cost, reverse=True):  # biggest first, to the least loaded lane
        min(plan, key=lambda ts: sum(map(expected_cost, ts))).append(t)
    rows_dir = Path(args.rows_dir or out_dir)
    rows_dir.mkdir(parents=True, exist_ok=True)
    lanes = []
    for i, mine in enumerate(plan):
        if not mine:
            continue
        mask = cpus[i * c:(i + 1) * c]
        path = rows_dir / f"rows-{stamp}-lane{i:02d}.jsonl"
        cmd = [sys.executable, os.path.abspath(__file__), "--lane-json", str(path),
               "--tasks", ",".join(t.name for t in mine), "--evals", str(args.evals),
               "--tune-trials", str(args.tune_trials), "--timing-shape", args.timing_shape,
               "--task-wall", str(args.task_wall), "--out-dir", str(out_dir)]
        if args.deadline:
            cmd += ["--deadline", f"{max(1.0, args.deadline - (time.monotonic() - T_START)):.0f}"]
        env = dict(os.environ, KSTRATA_LANE=str(i), TVM_NUM_THREADS=str(c), OMP_NUM_THREADS=str(c),
                   TVM_BIND_THREADS="0", PYTHONUNBUFFERED="1")
        log = out_dir / f"lane{i:02d}-{stamp}.log"
        with open(log, "w") as f:
            proc = subprocess.Popen(cmd, env=env, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    preexec_fn=lambda m=mask: os.sched_setaffinity(0, m))
        out(f"# lane {i}: CPUs {','.join(map(str, mask))}, {len(mine)} tasks: "
            f"{', '.join(t.name for t in mine)} (log {log})")
        lanes.append(SimpleNamespace(i=i, proc=proc, path=path, seen=0, log=log))

    def stop(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    old = signal.signal(signal.SIGTERM, stop)
    done = 0

    def drain() -> None:
        nonlocal done
        for ln in lanes:
            if not ln.path.exists():
                continue
            for row in read_rows([str(ln.path)])[ln.seen:]:
                ln.seen += 1
                done += 1
                out(f"# [{done}/{len(tasks)}] lane {ln.i}: {row['task']} at {row.get('shape')}")
                out(task_line(row), flush=True)

    try:
        while any(ln.proc.poll() is None for ln in lanes):
            drain()
            time.sleep(2)
    except KeyboardInterrupt as e:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        out(f"# stopped ({e}): ending the lanes; their finished tasks are kept")
        for ln in lanes:
            if ln.proc.poll() is None:
                ln.proc.terminate()
        for ln in lanes:
            try:
                ln.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                ln.proc.kill()
                ln.proc.wait()
    finally:
        signal.signal(signal.SIGTERM, old)
    drain()
    for ln in lanes:
        if ln.proc.returncode:
            out(f"# lane {ln.i} exited with {ln.proc.returncode}; see {ln.log}")
    return read_rows([str(ln.path) for ln in lanes if ln.path.exists()])


# -- the report --------------------------------------------------------------

def report(rows: list[dict]) -> None:
    """The table, the time table and the summary of ``rows``."""
    out()
    hdr = (f"{'task':22s} {'L':>1s} {'category':11s} {'vs eager [CI]':>18s} {'vs MetaSchedule [CI]':>21s} "
           f"{'trials':>6s} {'best made by':14s} {'n':>3s} {'cand/min':>8s} {'wall s':>6s}  verdicts")
    out(hdr)
    out("-" * len(hdr))
    for r in rows:
        if r.get("error"):
            out(f"{r['task']:22s} {r['level']:>1d} {r['category']:11s} ERROR: {r['error']}")
            continue
        v = ", ".join(f"{k}={n}" for k, n in sorted(r["verdicts"].items(), key=lambda kv: str(kv[0])))
        cpm = r["n_eval"] / (r["wall_s"] / 60) if r["wall_s"] > 0 else 0.0
        r["cpm"] = cpm
        made = "initial" if r["best"] is not None and r["best_level"] is None else str(r.get("best_role") or "-")
        out(f"{r['task']:22s} {r['level']:>1d} {r['category']:11s} {_fmt(r['eager']):>18s} "
            f"{_fmt_final(r['ms']):>21s} {r['trials']:>6d} {made:14s} {r['n_eval']:>3d} {cpm:>8.1f} "
            f"{r['wall_s']:>6.0f}  {v}" + ("  [wall cap hit]" if "wall" in str(r["stop"]) else "")
            + (f"  [MS: {r['ms_error']}]" if r.get("ms_error") else ""))

    # -- where the time went ------------------------------------------------
    out("\n## time per task (s): propose = search wall - evaluate; verify = evaluate - timing "
        "(verification incl. compiling the candidate in the worker); final = MetaSchedule tuning + final timing")
    out(f"{'task':22s} {'wall':>6s} {'propose':>7s} {'verify':>7s} {'timing':>7s} {'evals':>5s} {'s/eval':>6s} "
        f"{'final':>6s}")
    agg = {"wall": 0.0, "propose": 0.0, "verify": 0.0, "timing": 0.0, "n": 0, "final": 0.0}
    for r in rows:
        if r.get("error"):
            continue
        t = r.get("times") or {}
        timing = sum(v for k, v in t.items() if "timing" in k)
        evaluate = t.get("evaluate", 0.0)
        parts = {"wall": r["wall_s"], "propose": max(0.0, r["wall_s"] - evaluate),
                 "verify": max(0.0, evaluate - timing), "timing": timing, "n": r["n_eval"],
                 "final": r.get("ms_wall", 0.0)}
        for k in agg:
            agg[k] += parts[k]
        per = parts["wall"] / parts["n"] if parts["n"] else float("nan")
        out(f"{r['task']:22s} {parts['wall']:>6.0f} {parts['propose']:>7.1f} {parts['verify']:>7.1f} "
            f"{parts['timing']:>7.1f} {parts['n']:>5d} {per:>6.1f} {parts['final']:>6.0f}")
    tot = agg["wall"] or 1.0
    out(f"{'TOTAL':22s} {agg['wall']:>6.0f} {agg['propose']:>7.1f} {agg['verify']:>7.1f} {agg['timing']:>7.1f} "
        f"{agg['n']:>5d} {'':>6s} {agg['final']:>6.0f}")
    share = {k: agg[k] / tot for k in ("propose", "verify", "timing")}
    out("share of search wall: " + ", ".join(f"{k} {v:.0%}" for k, v in share.items()))

    # -- summary -----------------------------------------------------------
    n = len(rows)
    ok = [r for r in rows if not r.get("error")]
    fast_ms = sum(1 for r in ok if r["ms"] is not None and r["ms"].value > 1.0)
    fast_ms_ci = sum(1 for r in ok if r["ms"] is not None and r["ms"].ci_low is not None and r["ms"].ci_low > 1.0)
    fast_e = sum(1 for r in ok if r["eager"] is not None and r["eager"].value > 1.0)
    fast_e_ci = sum(1 for r in ok if r["eager"] is not None and r["eager"].ci_low is not None
                    and r["eager"].ci_low > 1.0)
    correct = sum(1 for r in ok if r["best"] is not None)
    evals = sum(r["n_eval"] for r in ok)
    wall = sum(r["wall_s"] for r in ok)
    l1 = [r for r in ok if r["level"] == 1]
    l1_cpm = f"{sum(r['n_eval'] for r in l1) / (sum(r['wall_s'] for r in l1) / 60):.1f}/min" if l1 else "no level-1 task"
    out("\n## summary")
    out(f"tasks run: {n}; errors: {n - len(ok)}; with a correct candidate: {correct}")
    # a task counts as faster only when the speedup's interval lies above 1 (issue 17 item 6); the point
    # estimate's count is shown beside it
    out(f"Fast@1.0 vs MetaSchedule at equal measured trials (CI lower bound > 1): {fast_ms_ci}/{n} = "
        f"{fast_ms_ci / n if n else 0:.2f}  (point estimate > 1: {fast_ms}/{n} = {fast_ms / n if n else 0:.2f})")
    out(f"fast_1 vs eager PyTorch (CI lower bound > 1): {fast_e_ci}/{n} = {fast_e_ci / n if n else 0:.2f}  "
        f"(point estimate > 1: {fast_e}/{n} = {fast_e / n if n else 0:.2f})")
    out(f"throughput (search wall, MetaSchedule baseline tuning excluded): {evals} candidates in "
        f"{wall / 60:.1f} min = {evals / (wall / 60) if wall else 0:.1f}/min overall; level-1: {l1_cpm}")
    fm = fast_ms_ci / n if n else 0.0
    if fm < 0.5:
        out(f"BELOW TARGET: Fast@1.0 {fm:.2f} < 0.5 (issue 6).")
    hosts = sorted({(r.get("env") or {}).get("host") or "this host" for r in ok})
    groups = [(h, [r for r in ok if ((r.get("env") or {}).get("host") or "this host") == h]) for h in hosts]
    if len(groups) > 1:  # merged rows of several machines: throughput is per machine
        out("rows come from several hosts; throughput per host:")
    for host, rs in groups:
        h1 = [r for r in rs if r["level"] == 1]
        cpm = sum(r["n_eval"] for r in h1) / (sum(r["wall_s"] for r in h1) / 60) if h1 else float("nan")
        if len(groups) > 1:
            w = sum(r["wall_s"] for r in rs)
            out(f"  {host}: {len(rs)} tasks, {sum(r['n_eval'] for r in rs)} candidates in {w / 60:.1f} min; "
                f"level-1: {cpm:.1f}/min")
        if h1 and not (cpm >= 20):
            worst = max(share, key=share.get)
            out(f"BELOW TARGET: level-1 throughput {cpm:.1f} < 20 candidates/min"
                f"{' on ' + host if len(groups) > 1 else ''} (issue 6); the largest share "
                f"of search wall time is '{worst}' ({share[worst]:.0%}); see the time table above.")


def select_tasks(args: Any) -> tuple[list, int] | None:
    """The tasks ``--tasks``/``--sample`` select, in suite order, and the pool size (None: unknown name)."""
    from kstrata.bench.sampling import stratified_sample
    from kstrata.tasks.loader import suite

    pool_tasks = [t for t in suite() if t.meta.level in (1, 2)]
    if args.tasks:
        wanted = [x.strip() for x in args.tasks.split(",") if x.strip()]
        by_name = {t.name: t for t in pool_tasks}
        missing = [w for w in wanted if w not in by_name]
        if missing:
            print(f"unknown level-1/2 tasks: {', '.join(missing)}", file=sys.stderr)
            return None
        tasks = [by_name[w] for w in wanted]
    else:
        tasks = pool_tasks
    if args.sample:
        tasks = stratified_sample(tasks, args.sample, seed=args.seed)
    return tasks, len(pool_tasks)


def in_order(rows: list[dict], tasks: list) -> list[dict]:
    """``rows`` in the order of ``tasks`` (the last row of a task wins), then any others."""
    by = {r["task"]: r for r in rows}
    names = [t.name for t in tasks]
    return [by[n] for n in names if n in by] + [r for n, r in by.items() if n not in names]


def merge(args: Any) -> int:
    sel = select_tasks(args)
    if sel is None:
        return 2
    tasks = sel[0]
    rows = in_order(read_rows(args.merge), tasks)
    out(f"# optimize_suite report merged {datetime.datetime.now().isoformat(timespec='seconds')} from "
        f"{len(rows)} task rows in: {' '.join(args.merge)}")
    for desc in sorted({json.dumps({k: (r.get('env') or {}).get(k) for k in ('host', 'config')}) for r in rows}):
        out(f"# rows from: {desc}")
    lanes = {(r.get("env") or {}).get("lane") for r in rows} - {None}
    if lanes:
        out(f"# rows from {len(lanes)} lane(s); lanes ran concurrently on one host (shared memory bandwidth and caches); "
            "both sides of each speedup were timed interleaved in the same lane, under the same load")
    missing = [t.name for t in tasks if t.name not in {r["task"] for r in rows}]
    if missing:
        out(f"# selected tasks without a row ({len(missing)}): {', '.join(missing)}")
    out("# speedup = baseline time / candidate time, [95% bootstrap CI], * = still noisy after re-measuring")
    for r in rows:
        out(f"# {r['task']} at {r.get('shape')}")
        out(task_line(r))
    report(rows)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="", help="comma list of suite task names (default: all level 1-2)")
    ap.add_argument("--sample", type=int, default=0, help="stratified sample of N tasks (0 = all)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the stratified sample")
    ap.add_argument("--evals", type=int, default=30, help="evaluations per task")
    ap.add_argument("--tune-trials", type=int, default=0,
                    help="MetaSchedule trials the built-in proposer may spend itself (counted in the equal trials)")
    ap.add_argument("--timing-shape", default="fit", help="fit (default) or nominal")
    ap.add_argument("--task-wall", type=float, default=420.0, help="safety cap, seconds per task search")
    ap.add_argument("--out-dir", default="", help="run directories (default: a new temp dir)")
    ap.add_argument("--note", default="", help="a line printed in the header (e.g. why a sample)")
    ap.add_argument("--report", default="", help="also write the report (without tool logs) to this file")
    ap.add_argument("--deadline", type=float, default=0.0, help="start no task after this many seconds (0 = none)")
    ap.add_argument("--lanes", type=int, default=0, help="run the tasks in N pinned parallel lanes (0 = in this process)")
    ap.add_argument("--cpus-per-lane", type=int, default=2, help="CPUs of each lane")
    ap.add_argument("--rows-dir", default="", help="with --lanes: where the lanes' rows files go (default --out-dir)")
    ap.add_argument("--skip-done", nargs="+", default=[], metavar="ROWS", help="leave out tasks with a row in these files")
    ap.add_argument("--merge", nargs="+", default=[], metavar="ROWS", help="only print the report of these rows files")
    ap.add_argument("--lane-json", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.report:
        Path(args.report).write_text("")
        _REPORT.append(args.report)
    if args.merge:
        return merge(args)

    import torch
    import tvm

    from kstrata.backends.registry import get_backend
    from kstrata.measure.environment import cpu_name

    try:
        import importlib.metadata as md

        ffi = md.version("apache-tvm-ffi")
    except Exception:  # noqa: BLE001
        ffi = "?"
    backend = get_backend("tvm-llvm")
    av = backend.availability()
    sel = select_tasks(args)
    if sel is None:
        return 2
    tasks, n_pool = sel
    if args.skip_done:
        done = {r["task"] for r in read_rows(args.skip_done)}
        tasks = [t for t in tasks if t.name not in done]
    out_dir = Path(args.out_dir) if args.out_dir else Path(tempfile.mkdtemp(prefix="kstrata-optimize-suite-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")

    cmd = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    out(f"# optimize_suite {datetime.datetime.now().isoformat(timespec='seconds')}")
    out(f"# command: {cmd}")
    out(f"# host: {platform.machine()} {cpu_name()}, {os.cpu_count()} CPUs (no GPU; tvm-llvm on CPU)")
    if args.lanes:
        cpu = lscpu()
        out(f"# lanes: {args.lanes} concurrent lanes x {args.cpus_per_lane} CPUs each, pinned, on one host "
            f"({cpu.get('Model name', cpu_name())}; {cpu.get('Socket(s)', '?')} sockets, "
            f"{cpu.get('Thread(s) per core', '?')} threads per core, {cpu.get('NUMA node(s)', '?')} NUMA nodes): "
            "the lanes share memory bandwidth and caches; both sides of each speedup are timed interleaved "
            "in the same lane, so they see the same load")
    out(f"# versions: python {platform.python_version()} torch {torch.__version__} tvm {tvm.__version__} "
        f"apache-tvm-ffi {ffi}")
    out(f"# backend tvm-llvm: {'usable' if av.usable else 'NOT usable: ' + str(av.reason)}")
    out(f"# proposer builtin (rules; own MetaSchedule trials {args.tune_trials}), policy greedy, seed 0; "
        f"budget per task: evaluations={args.evals} (safety cap wall={args.task_wall:g}s)")
    out(f"# timing shape: {args.timing_shape}; the search times against eager at that shape; the best is then "
        "timed against MetaSchedule tuned with trials = evaluations + the proposer's own tuning trials")
    scope = f"{len(tasks)} of {n_pool} level-1/2 suite tasks"
    if args.sample:
        scope += f" (stratified sample over levels/categories, seed {args.seed})"
    if args.skip_done:
        scope += f" (tasks with a row in {' '.join(args.skip_done)} skipped)"
    if args.deadline:
        scope += f"; no task starts after {args.deadline:g}s"
    out(f"# tasks: {scope}")
    if args.note:
        out(f"# note: {args.note}")
    out(f"# run directories: {out_dir}")
    out("# speedup = baseline time / candidate time, [95% bootstrap CI], * = still noisy after re-measuring")
    if not av.usable:
        return 1

    if args.lanes:
        rows = in_order(run_lanes(args, tasks, out_dir, stamp), tasks)
        missing = [t.name for t in tasks if t.name not in {r["task"] for r in rows}]
        if missing:
            out(f"# tasks without a row ({len(missing)}; deadline, stop or lane failure): {', '.join(missing)}")
    else:
        if args.lane_json:
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        rows = run_tasks(args, tasks, backend, out_dir, stamp)
        if args.lane_json:
            return 0
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
