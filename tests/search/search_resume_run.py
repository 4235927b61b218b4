"""Script for the kill-and-resume test: ``python search_resume_run.py RUN_DIR LOG [resume]``.

Runs a greedy search on the synthetic landscape with a slow fake evaluator
that appends one line per evaluator call to LOG.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask  # noqa: E402

from kstrata.search import Budget, SearchSettings, optimize  # noqa: E402

BUDGET = Budget(evaluations=45)
SETTINGS = SearchSettings(seed=3, lookahead_expansions=1)
POLICY = "map-elites"


class LoggingEvaluator(FakeEvaluator):
    def __init__(self, log: Path | None, delay: float):
        super().__init__(delay)
        self.log = log

    def evaluate(self, task, backend, srcs):
        if self.log is not None:
            with open(self.log, "a") as f:
                f.write(srcs["graph"].strip() + " " + srcs["schedule"].replace("\n", " ") + "\n")
        return super().evaluate(task, backend, srcs)


def main(run_dir: str, log: str | None, resume: bool, delay: float = 0.04):
    return optimize(FakeTask(), FakeBackend(), FakeProposer(), LoggingEvaluator(log and Path(log), delay),
                    POLICY, BUDGET, run_dir, resume=resume, settings=SETTINGS)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], len(sys.argv) > 3)
