"""Names a level's text runs with already bound are read as imports by the
static checks (sandbox red-team 2026-12-04, case tune_cache_poison: a TVM
schedule reached ``sys.modules`` as ``getattr(tvm.support.sys, "modules")``
through the ``tvm`` its namespace provides, and the strict checks passed it,
because the text never imported ``tvm``)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kstrata.backends.tvm.backend import TVMBackend
from kstrata.cli.main import app
from kstrata.verify.integrity.static import static_findings

CASE = Path(__file__).parents[1] / "sandbox" / "cases" / "tune_cache_poison" / "candidate.json"
REACH = "def schedule_relu(sch):\n    mods = getattr(tvm.support.sys, 'modules')\n    return mods\n"


def test_a_schedule_reaching_sys_through_the_provided_tvm_is_found():
    provided = TVMBackend.level_globals["schedule"]
    assert not static_findings(REACH, dsl=False)  # without the namespace: an unknown name, nothing to read
    checks = {f.check for f in static_findings(REACH, dsl=False, provided=provided)}
    assert checks == {"no_introspection"}, checks
    honest = "def schedule_relu(sch):\n    b = sch.get_sblock('compute')\n    sch.parallel(sch.get_loops(b)[0])\n"
    assert not static_findings(honest, dsl=False, provided=provided)


def test_the_provided_names_are_what_a_schedule_runs_with():
    from kstrata.backends.tvm.schedule import _namespace

    assert set(TVMBackend.level_globals["schedule"]) == set(_namespace(None)) - {"sch", "__builtins__"}


def test_the_case_schedule_is_rejected_by_eval(tmp_path):
    sources = json.loads(CASE.read_text())
    for level in ("graph", "schedule"):
        (tmp_path / f"{level}.py").write_text(sources[level])
    r = CliRunner().invoke(app, ["eval", "relu", str(tmp_path), "--backend", "tvm-llvm", "--scope", "small",
                                 "--no-time", "--json"])
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["verdict"] == "rejected" and out["check"] == "no_introspection", (out["verdict"], out["message"])
