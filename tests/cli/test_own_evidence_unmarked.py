"""kstrata's own evidence text is not marked as the candidate's (newcomer nc24, case
/tmp/nc24/cases/caught_ok): ``kstrata eval`` marks every later line of text a candidate may
have written with ``    | `` (README, "Evaluating a candidate"), and printed the verdict's
``self_reported`` note (kstrata's sentence "these checks passed on findings sent by the
candidate's own process, which code running there can forge: ...") with that mark too, so
it read as the candidate's output. Now kstrata's own keys are indented only; a candidate's
text (a traceback) is marked as before."""

from kstrata.cli.eval import evidence_line
from kstrata.sandbox.reported import self_reported


def test_self_reported_note_wraps_without_the_candidate_mark():
    note = self_reported("triton-interp", {})
    assert note["message"]  # this backend has checks resting on the candidate's report
    line = evidence_line("self_reported", note, width=80)
    assert len(line.splitlines()) > 1  # wrapped at 80 columns
    assert "|" not in line
    assert "which code" in line and "can forge" in " ".join(line.split())


def test_a_candidates_traceback_is_still_marked():
    line = evidence_line("traceback", "Traceback (most recent call last):\nverdict: correct", width=80)
    assert line.splitlines()[1].startswith("    | ")
