"""``kstrata eval`` for the verifier cases, run in this process with one judge
pool per backend for the whole session.

Each ``kstrata eval`` in a new process paid three interpreter starts that
import torch (the CLI, its judge worker, the judge's sandbox zygote): about
half a minute per case on a busy 2-core machine. Here the CLI runs through
typer's test runner, and its judge pool (``kstrata.cli.eval.pool_for``) is one
kept pool per backend, as ``kstrata optimize`` keeps one for all its
candidates; every candidate still gets its own sandboxed process forked
from the judge's zygote, and the verdict, evidence and timing are the CLI's
own ``--json`` output.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

CASES = Path(__file__).resolve().parent / "cases"


class _KeptPool:
    """A pool whose ``close()`` (the CLI closes its pool after each eval) leaves it open."""

    def __init__(self, pool: Any):
        self.pool = pool

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pool, name)

    def close(self) -> None:
        pass


@pytest.fixture(scope="session")
def kstrata_cli():
    """``kstrata_cli(*args) -> click Result``: the ``kstrata`` CLI in this process,
    from ``tests/verify/cases`` (the case files' paths are relative to it), with
    the session's judge pools."""
    from typer.testing import CliRunner

    from kstrata.backends.workers import pool_for
    from kstrata.cli import eval as eval_cli
    from kstrata.cli.main import app

    pools: dict[str, Any] = {}

    def kept(backend: Any, *args: Any, **kwargs: Any) -> _KeptPool:
        if backend.name not in pools:
            pools[backend.name] = pool_for(backend, *args, **kwargs)
        return _KeptPool(pools[backend.name])

    def run(*args: str):
        with pytest.MonkeyPatch.context() as mp, contextlib.chdir(CASES):
            mp.setattr(eval_cli, "pool_for", kept)
            return CliRunner().invoke(app, list(args))

    yield run
    for pool in pools.values():
        pool.close()


@pytest.fixture(scope="session")
def kstrata_eval(kstrata_cli):
    """``kstrata_eval(task, candidate, *args, backend="pytorch") -> dict``: the JSON
    of ``kstrata eval TASK CANDIDATE --backend B --json ARGS``; the command must
    succeed without a traceback."""

    def run(task: str, candidate: str, *args: str, backend: str = "pytorch") -> dict:
        r = kstrata_cli("eval", task, candidate, "--backend", backend, "--json", *args)
        assert r.exit_code == 0 and r.exception is None, f"rc={r.exit_code}\n{r.output[-3000:]}\n{r.exception!r}"
        assert "Traceback" not in r.stderr, r.stderr[-3000:]
        return json.loads(r.stdout[r.stdout.index("{"):])

    return run


@pytest.fixture(scope="session")
def check_case(kstrata_eval):
    """``check_case(case, task, candidate, backend, args, verdicts, check)``: run
    one red-team row (a case folder under ``cases/``; ``task`` a suite name or
    a file in that folder) through :func:`kstrata_eval` and assert its verdict
    is one of ``verdicts`` and, when ``check`` is given, that check fired."""

    def run(case: str, task: str, candidate: str, backend: str, args: tuple[str, ...],
            verdicts: tuple[str, ...], check: str | None) -> dict:
        task = f"{case}/{task}" if task.endswith(".py") else task
        d = kstrata_eval(task, f"{case}/{candidate}", *args, backend=backend)
        said = f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"
        assert d["verdict"] in verdicts, said
        if check is not None:
            assert check == d.get("check") or check in said, said
        return d

    return run
