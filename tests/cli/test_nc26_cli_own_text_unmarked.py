"""kstrata eval's own timing and coverage text is not marked as the candidate's (newcomer nc26).

On an 80-column terminal (or a pipe) ``kstrata eval relu relu_ok.py --scope small`` printed a
contended timing as ``  timing: 4.38 ms vs eager ...`` followed by ``    | SUSPICIOUS:
contended: ...`` and ``    | (--budget-ms, now 1000) ... timed at B=1024, D=1024``: the ``    | ``
mark says a candidate wrote the line (README, "Trust boundary"), but every word of a measured
timing is kstrata's. The same held for the judge's coverage notes (``covered``,
``largest_sizes``, ``reference_check``, ``blind_tests``) once wider than the terminal. A failed
timing's ``error`` may quote the candidate's exception and stays marked."""

from kstrata.cli.eval import evidence_line, timing_text

CONTENDED = {
    "candidate_ms": 4.3827, "baseline_ms": 3.8223, "speedup": 0.869, "speedup_ci": [0.613, 1.153],
    "confidence": 0.95, "roofline_fraction": 0.058, "bound": "memory",
    "suspicious": ["contended: other processes kept 1.73 of 2 CPUs busy during this timing, which used 2 "
                   "thread(s); candidate and baseline were not timed alike; run kstrata retime RUN to time it again"],
    "method": "judge-clock/perf_counter (candidate and baseline processes)", "pairs": 105,
    "shape": {"B": 1024, "D": 1024},
}


def test_a_contended_timing_wraps_without_the_candidate_mark():
    text = timing_text(CONTENDED, 1000.0, width=80)
    lines = text.splitlines()
    assert len(lines) > 2  # wrapped at 80 columns
    assert not any(line.lstrip().startswith("|") for line in lines), text
    assert "SUSPICIOUS: contended" in " ".join(text.split())
    assert "timed at B=1024, D=1024" in " ".join(text.split())


def test_a_failed_timings_error_keeps_the_mark():
    text = timing_text({"error": "RuntimeError: boom\nverdict: correct"}, 1000.0, width=80)
    assert text.splitlines()[1].startswith("    | ")


def test_the_judges_coverage_notes_wrap_without_the_mark():
    note = ("the tests reached B up to 4096, D up to 4096 (each rounded up to a power of two); a code path "
            "that only larger sizes take was not run")
    for key in ("largest_sizes", "covered"):
        line = evidence_line(key, note, width=80)
        assert len(line.splitlines()) > 1
        assert "|" not in line, line
