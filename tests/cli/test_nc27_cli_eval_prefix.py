"""``kstrata eval TASK RUN/candidates/<prefix>`` takes a hash prefix as ``kstrata show`` does
(newcomer nc27: the README says "a prefix will do", but eval refused ``candidates/354857c9`` as
"no such candidate file or directory"). One resolver, the run's store, serves both: an unknown or
ambiguous prefix is one clear error naming the run (and the candidates that match)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from typer.testing import CliRunner

from kstrata.api import read_candidate
from kstrata.cli.main import app
from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.store import CandidateRecord, RunStore
from kstrata.store.candidate_path import candidate_path


@dataclass(frozen=True)
class _Task:
    name: str = "softmax"
    digest: str = hashlib.sha256(b"softmax").hexdigest()
    path: str = "softmax.py"


def _run(run, texts):
    """A pytorch run of ``softmax`` holding one candidate per source text; their hashes."""
    hashes = []
    with RunStore.create(run, {"task": {"name": "softmax"}, "backend": "pytorch"}) as store:
        tid = store.ensure_task(_Task())
        for text in texts:
            sources = normalize_sources({"source": text})
            digest = content_hash(sources, "pytorch", _Task().digest)
            store.add_candidate(CandidateRecord(hash=digest, sources=sources, level="source", role="r",
                                                proposer="p", backend="pytorch"), tid)
            hashes.append(digest)
    return hashes


def _eval(*args):
    r = CliRunner().invoke(app, ["eval", *args, "--no-time"], env={"COLUMNS": "400"})
    return r.exit_code, " ".join(r.output.split())


def test_eval_resolves_a_prefix_to_the_runs_candidate(tmp_path):
    run = tmp_path / "run"
    (digest,) = _run(run, ["class ModelNew: pass\n"])
    assert candidate_path(run / "candidates" / digest[:8]) == run / "candidates" / digest
    assert read_candidate(run / "candidates" / digest[:8]) == ({"source": "class ModelNew: pass\n"}, "pytorch")
    # the prefix reaches the candidate: its run's task (softmax) is told, not "no such candidate file"
    rc, text = _eval("relu", str(run / "candidates" / digest[:8]))
    assert rc == 2 and f"candidates/{digest} is a candidate of softmax, not of relu" in text, text


def _ambiguous_texts():
    """Two texts whose candidates' hashes share their first character."""
    seen = {}
    for i in range(64):
        text = f"class ModelNew: pass  # {i}\n"
        first = content_hash(normalize_sources({"source": text}), "pytorch", _Task().digest)[0]
        if first in seen:
            return [seen[first], text]
        seen[first] = text
    raise AssertionError("no two hashes share a first character")


def test_an_ambiguous_or_unknown_prefix_is_one_clear_error(tmp_path):
    run = tmp_path / "run"
    a, b = _run(run, _ambiguous_texts())
    rc, text = _eval("softmax", str(run / "candidates" / a[0]))
    assert rc == 2 and f"several candidates in {run} match '{a[0]}'" in text, text
    assert a[:12] in text and b[:12] in text and "give more of the hash" in text, text
    rc, text = _eval("softmax", str(run / "candidates" / "g"))  # no hash has a 'g'
    assert rc == 2 and f"no candidate in {run} matches 'g'" in text and "kstrata tree" in text, text
