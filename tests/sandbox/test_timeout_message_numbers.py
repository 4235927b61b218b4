"""A timeout's message says when its numbers were taken: the newcomer read
"did not answer in the 31.6 s left of the time limit ... (the candidate's
calls took 38.5 s ...)" as a contradiction. The seconds left are those left
when the unanswered request was sent, and the message now says so, naming
the request, so the candidate's total (its earlier requests included) can
be larger."""

from __future__ import annotations

import os

import pytest

from kstrata.sandbox.client import CandidateDied, CandidateProcess


def test_timeout_names_the_request_and_when_its_seconds_were_left():
    proc = CandidateProcess("pytorch", sandbox=False)
    proc.rfd, theirs = os.pipe()  # nobody answers
    reader, proc.wfd = os.pipe()
    try:
        with pytest.raises(CandidateDied) as e:
            proc.request({"op": "call"}, timeout_s=0.2)
    finally:
        for fd in (theirs, reader):
            os.close(fd)
    assert e.value.cause == "timeout"
    msg = str(e.value)
    assert "its 'call' request, sent when 0.2 s of the time limit were left" in msg
    assert "earlier requests" in msg and proc.rfd == -1
