"""Re-record ``cassettes/softmax_tvm-llvm.jsonl`` and its ``.run.json`` when
the prompts change (``test_cassette_replay.py`` then fails: a prompt finds no
recorded answer).

Usage (from the repository root)::

    .venv/bin/python tests/agents/record_cassette.py QUEUE_DIR

It runs the replay test's search (the ``llm`` proposer, greedy, the recorded
budget, the test's timing options and secret) with the queue provider on
``QUEUE_DIR``: answer each ``QUEUE_DIR/<id>.prompt.md`` as the model
(write ``<id>.response.md``; keep answers as given, failed and declined ones
included). Timings are real but always trusted, as in the replay, so the
recording and the replay take the same decisions on a loaded machine. At the
end both files are replaced atomically, with the date and ``--note``.

With ``--recorded-speedups`` every timing's speedup is the one the current
``.run.json`` recorded for that candidate (as the replay test takes them), so
the search takes the recorded path and each earlier answer, given again in
the same order, meets the prompt it was written for (queue round 3: with real
speedups on a loaded machine the greedy policy took another path, and the
fourth answer met a prompt about another candidate).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from dataclasses import replace
from datetime import date
from pathlib import Path

from kstrata.agents.registry import make_proposer
from kstrata.backends.registry import get_backend
from kstrata.measure.timing import TimingConfig
from kstrata.search.budget import Budget
from kstrata.search.candidate import content_hash
from kstrata.search.evaluators import VerifyMeasureEvaluator
from kstrata.search.loop import SearchSettings, optimize
from kstrata.search.tree import CandidateTree
from kstrata.store.run_store import RunStore
from kstrata.tasks.loader import resolve_task
from kstrata.tasks.scaling import fitted_shape

ROOT = Path(__file__).resolve().parents[2]
CASSETTE = ROOT / "cassettes" / "softmax_tvm-llvm.jsonl"
RUN = CASSETTE.with_suffix(".run.json")


class TrustedTimings(VerifyMeasureEvaluator):
    """Real verification and timing; a timing is never noisy or suspicious
    (what the replay test's evaluator assumes too). With ``recorded``
    (``{hash: speedup vs eager}``), a candidate's speedup is the recorded one;
    a candidate it does not have (the path diverged) keeps its measured one."""

    def __init__(self, *args, recorded: dict[str, float] | None = None, **kwargs) -> None:  # noqa: ANN002,ANN003
        super().__init__(*args, **kwargs)
        self.recorded = recorded

    def _time(self, task, backend, sources, baseline, **kwargs):  # noqa: ANN001 - the evaluator's signature
        m = super()._time(task, backend, sources, baseline, **kwargs)
        # a candidate the recorded run did not have (the path changed there) keeps its measured speedup
        s = None if self.recorded is None else self.recorded.get(content_hash(sources, backend.name, task.digest))
        if s is not None:
            m = replace(m, speedup=replace(m.speedup, point=s, low=s, high=s))
        return replace(m, noisy=False, suspicious=[])


def _write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main() -> None:
    """Record; see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("queue", type=Path)
    ap.add_argument("--run-dir", type=Path, default=None)
    ap.add_argument("--evals", type=int, default=None, help="evaluation budget (default: the recorded one)")
    ap.add_argument("--calls", type=int, default=None, help="proposer-call budget (default: the recorded one)")
    ap.add_argument("--recorded-speedups", action="store_true",
                    help="take each candidate's speedup from the current .run.json (the recorded path)")
    ap.add_argument("--note", default="answers written through the queue provider by an engineer acting as "
                                      "the model (kept as given, including the failed and the declined ones)")
    args = ap.parse_args()
    recorded = json.loads(RUN.read_text())
    from kstrata.agents.knowledge import spec_for_backend

    # the prompts name this machine's CPU spec; the replay test sets the same one (KSTRATA_CPU_SPEC)
    cpu_spec = spec_for_backend(recorded["backend"])["name"]
    os.environ["KSTRATA_CPU_SPEC"] = cpu_spec
    for key, value in (("evaluations", args.evals), ("proposer_calls", args.calls)):
        if value is not None:
            recorded["budget"][key] = value
    task, backend = resolve_task(recorded["task"]), get_backend(recorded["backend"])
    run_dir = args.run_dir or Path(tempfile.mkdtemp(prefix="cassette-run-"))
    new = CASSETTE.with_name(f".{CASSETTE.name}.new")
    new.unlink(missing_ok=True)
    proposer = make_proposer("llm", backend=backend, llm=f"queue:{args.queue}", record=new)
    speedups = {c["hash"]: c["speedup_eager"] for c in recorded["candidates"]} if args.recorded_speedups else None
    evaluator = TrustedTimings(secret="replay-test", timing_config=TimingConfig(budget_ms=50, max_remeasure=0),
                               shape=fitted_shape(task), confirm_scope=None, recorded=speedups)
    result = optimize(task, backend, proposer, evaluator, policy=proposer.policy("greedy"), router=proposer.router,
                      budget=Budget(**recorded["budget"]),
                      run_dir=run_dir / "run", settings=SearchSettings(seed=0, lookahead_expansions=2))
    with RunStore.open(result.run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
    candidates = []
    for n in sorted(tree, key=lambda n: n.seq):
        m = n.record.measurement
        candidates.append({"hash": n.hash, "parents": list(n.parents), "level": n.level, "role": n.role,
                           "verdict": str(n.verdict), "speedup_eager": n.speedup,
                           "median_ms": m.median_ms if m is not None and n.correct else None})
    out = {**recorded, "recorded": f"{date.today().isoformat()}, {args.note}", "cpu_spec": cpu_spec,
           "candidates": candidates}
    os.replace(new, CASSETTE)
    _write(RUN, json.dumps(out, indent=1) + "\n")
    print(f"recorded {len(candidates)} candidates to {CASSETTE} and {RUN} (run: {result.run_dir})")


if __name__ == "__main__":
    main()
