"""``kstrata baseline`` showed tight speedup intervals on timings marked only
"noisy, remeasured 2x", with no untrusted/contended marker as eval and
optimize give, and cut its column headers at 80 columns (the newcomer's
report)."""

from __future__ import annotations

import io

from kstrata.cli.baseline import _table, untrusted_lines
from kstrata.cli.errors import Console
from kstrata.measure.baselines import BaselineResult

CONTENDED = ("contended: other processes kept 1.70 of 2 CPUs busy during this timing, which used 2 thread(s); "
             "candidate and baseline were not timed alike. Time it again on a quiet machine (`kstrata retime RUN`) "
             "before believing the speedup")


def _m(noisy: bool, suspicious: list[str], speedup: dict | None = None) -> dict:
    return {"candidate": {"median": 0.658, "iqr": 3.0, "min": 0.509}, "reps": 259, "noisy": noisy,
            "remeasured": 2, "suspicious": suspicious, "speedup": speedup}


def _render(results: list[BaselineResult]) -> str:
    out = io.StringIO()
    Console(file=out, width=80).print(_table("rmsnorm at B=1024, D=1024", "tvm-llvm", results))
    return out.getvalue()


def test_untrusted_rows_are_marked_and_said_why_below():
    results = [BaselineResult("eager", True, measurement=_m(True, [CONTENDED])),
               BaselineResult("metaschedule", True, trials=4, cached=True,
                              measurement=_m(False, [], {"point": 0.929, "low": 0.911, "high": 0.951}))]
    text = _render(results)
    eager = next(ln for ln in text.splitlines() if ln.startswith("│ eager"))
    assert "UNTRUSTED" in eager
    ms = next(ln for ln in text.splitlines() if "metaschedule" in ln)
    assert "UNTRUSTED" not in ms and "remeasured 2x" in ms and "trials=4" in text
    # its ratio rests on eager's untrusted timing (newcomer nc13), and the caption says what the ratio is
    cells = " ".join(ln.split("│")[-2].strip() for ln in text.splitlines() if ln.count("│") > 2)  # notes column
    assert "ratio vs a doubtful eager" in cells, text
    assert "not the ratio of the medians shown" in " ".join(text.split())
    lines = untrusted_lines(results, 1000)
    assert lines[0] == "UNTRUSTED timing of eager: still noisy after 2 re-measurement(s)"
    assert lines[1].startswith("UNTRUSTED timing of eager: contended: other processes kept 1.70 of 2 CPUs")
    assert "retime RUN" not in " ".join(lines)  # a run's advice does not apply to a baseline
    assert "--budget-ms, now 1000" in lines[-1]
    assert untrusted_lines(results[1:], 1000) == []


def test_headers_are_whole_at_80_columns():
    text = _render([BaselineResult("metaschedule", True, trials=4,
                                   measurement=_m(False, [], {"point": 0.929, "low": 0.911, "high": 0.951}))])
    assert "…" not in text
    for word in ("baseline", "median", "IQR", "vs eager", "(95% CI)", "pairs", "notes", "metaschedule"):
        assert word in text
    assert max(len(ln) for ln in text.splitlines()) <= 80
