"""The evaluator re-times a doubtful would-be best in the timing call that took it."""

from __future__ import annotations

from types import SimpleNamespace

from search_fakes import FakeBackend, FakeTask

from kstrata.measure.stats import RatioCI
from kstrata.search.candidate import to_measurement_record
from kstrata.search.evaluators import VerifyMeasureEvaluator
from kstrata.verdict import Verdict
from kstrata.verify import Evaluation


def _timing(point, noisy, retimes=()):
    return SimpleNamespace(candidate=SimpleNamespace(median=1.0), suspicious=[], noisy=noisy, roofline=None,
                           speedup=RatioCI(point=point, low=point * 0.9, high=point * 1.1, confidence=0.95,
                                           n_resamples=10),
                           retimes=list(retimes), to_dict=lambda: {"point": point, "retimes": list(retimes)})


def _setup(monkeypatch, answers):
    import kstrata.measure.candidate as mc
    import kstrata.verify as v

    ok = Evaluation(verdict=Verdict.CORRECT, public_tests=2, hidden_tests=4)
    monkeypatch.setattr(v, "verify_candidate", lambda *a, **k: ok)
    calls = []

    def fake_time(backend, task, sources, shape=None, *, baseline, **kw):
        calls.append(kw)
        item = answers.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    monkeypatch.setattr(mc, "time_candidate", fake_time)
    return calls


def test_the_timer_is_asked_to_retime_above_the_best_and_its_clean_retiming_counts(monkeypatch):
    clean = _timing(2.0, noisy=False, retimes=[{"point": 6.0}])  # the timer re-timed a noisy 6.0x
    calls = _setup(monkeypatch, [clean])
    e = VerifyMeasureEvaluator(secret="s", baselines=("eager",), confirm_scope=None)
    _, m = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    assert [(c["retimes"], c["retime_above"]) for c in calls] == [(2, 0.0)]  # one call, no second one
    rec = to_measurement_record(m)
    assert rec.speedup == 2.0 and not rec.findings and e.best_speedup == 2.0
    assert m["raw"]["eager:doubtful"] == {"point": 6.0} and "retimes" not in m["raw"]["eager"]


def test_retimings_that_stayed_doubtful_leave_the_timing_untrusted_without_another_call(monkeypatch):
    calls = _setup(monkeypatch, [_timing(5.0, noisy=True, retimes=[{"point": 5.1}, {"point": 4.9}])])
    e = VerifyMeasureEvaluator(secret="s", baselines=("eager",), confirm_scope=None)
    _, m = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    rec = to_measurement_record(m)
    assert len(calls) == 1 and e.best_speedup == 0.0
    assert str(rec.findings[0]).startswith("untrusted timing:") and "timed 3 times in the search" in rec.findings[0]


def test_a_timer_that_does_not_retime_is_asked_again_and_a_mismatch_there_rejects(monkeypatch):
    mismatch = RuntimeError("exception: TimedOutputMismatch: timed call 7 (input copy 2) returned a wrong output")
    calls = _setup(monkeypatch, [_timing(5.0, noisy=True), mismatch])
    e = VerifyMeasureEvaluator(secret="s", baselines=("eager",), confirm_scope=None)
    ev, m = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    assert len(calls) == 2 and "retimes" not in calls[1]  # the fallback re-timing is a plain timing
    assert ev.verdict is Verdict.REJECTED and ev.check == "timed_output" and m is None
    assert ev.evidence["message"].startswith("timed call 7")


def test_the_final_round_and_other_baselines_are_not_retimed_in_the_call(monkeypatch):
    calls = _setup(monkeypatch, [_timing(1.5, noisy=False), _timing(1.2, noisy=False), _timing(1.5, False)])
    e = VerifyMeasureEvaluator(secret="s", baselines=("eager", "compile"), confirm_scope=None)
    e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    assert "retimes" in calls[0] and "retimes" not in calls[1]
    e.final_round(FakeTask(), FakeBackend(), {"graph": "x"})
    assert all("retimes" not in c for c in calls[2:])


def test_the_untrusted_finding_says_how_often_it_was_timed_and_gives_the_advice_once(monkeypatch):
    # The newcomer read "... before believing the speedup after 2 re-timing(s); not ranked ..." on a candidate
    # that `tree` called "first timing": the contention note's own advice ran into the count.
    from kstrata.measure.contention import PREFIX

    noisy = _timing(5.0, noisy=True, retimes=[{"point": 5.1}])
    noisy.suspicious = [f"{PREFIX} other processes kept 1.60 of 2 CPUs busy during this timing, which used 1 "
                        "thread(s); candidate and baseline were not timed alike. Time it again on a quiet machine "
                        "(`kstrata retime RUN`) before believing the speedup"]
    _setup(monkeypatch, [noisy])
    _, m = VerifyMeasureEvaluator(secret="s", baselines=("eager",), confirm_scope=None).evaluate(
        FakeTask(), FakeBackend(), {"graph": "x"})
    finding = to_measurement_record(m).findings[0]
    assert "were not timed alike (timed 2 times in the search, every timing doubtful)" in finding
    assert finding.count("kstrata retime") == 1 and "re-timing(s)" not in finding


def test_the_final_rounds_untrusted_finding_gives_the_advice_once(monkeypatch):
    # Queue round of 2026-12-05: the final round quoted the contention note with its own advice, so a
    # prompt read "... Time it again on a quiet machine (`kstrata retime RUN`) before believing the speedup
    # in the final, longer timing round; not ranked as a speedup (`kstrata retime` re-times it ...)".
    from kstrata.measure.contention import PREFIX

    noisy = _timing(5.0, noisy=True)
    noisy.suspicious = [f"{PREFIX} other processes kept 1.62 of 2 CPUs busy during this timing, which used 2 "
                        "thread(s); candidate and baseline were not timed alike. Time it again on a quiet machine "
                        "(`kstrata retime RUN`) before believing the speedup"]
    _setup(monkeypatch, [noisy])
    m = VerifyMeasureEvaluator(secret="s", baselines=("eager",), confirm_scope=None).final_round(
        FakeTask(), FakeBackend(), {"graph": "x"})
    finding = to_measurement_record(m).findings[0]
    assert "were not timed alike in the final, longer timing round; not ranked as a speedup" in finding
    assert finding.count("kstrata retime") == 1 and "before believing" not in finding


def test_the_judges_own_timing_worker_killed_for_memory_leaves_a_correct_untimed_candidate(monkeypatch):
    """The newcomer round of 2026-12-03: under memory pressure the kernel's OOM killer ended kstrata's
    timing worker, and every candidate (TVM's own softmax too) was stored as runtime_error."""
    oom = RuntimeError("oom: worker 3 killed by SIGKILL (not by kstrata: most likely the kernel's OOM killer)")
    _setup(monkeypatch, [oom])
    e = VerifyMeasureEvaluator(secret="s", baselines=("eager",), confirm_scope=None)
    ev, m = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    assert ev.verdict is Verdict.CORRECT and m is None
    assert "ran out of memory" in ev.evidence["not_timed"] and "kstrata retime" in ev.evidence["not_timed"]
    # a candidate's own failure while timed stays its verdict
    _setup(monkeypatch, [RuntimeError("exception: CandidateLoadError: candidate process: did not load")])
    ev, m = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    assert ev.verdict is Verdict.RUNTIME_ERROR and ev.check == "timing" and m is None


def test_a_candidate_process_the_machines_oom_killer_ended_while_timed_leaves_it_correct_untimed(monkeypatch):
    """Newcomer nc27: a candidate process ended by the machine's OOM killer before its own cgroup limit
    (CandidateDied 'host_memory') is the machine's state, as the judge's own worker's death is; its own
    limit ('memory') stays the candidate's runtime_error."""
    from kstrata.sandbox import CandidateDied

    e = VerifyMeasureEvaluator(secret="s", baselines=("eager",), confirm_scope=None)
    _setup(monkeypatch, [CandidateDied("host_memory", "the machine ran out of memory ...")])
    ev, m = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    assert ev.verdict is Verdict.CORRECT and m is None and "ran out of memory" in ev.evidence["not_timed"]
    _setup(monkeypatch, [CandidateDied("memory", "the candidate exceeded the memory limit (2048 MiB)")])
    ev, m = e.evaluate(FakeTask(), FakeBackend(), {"graph": "x"})
    assert ev.verdict is Verdict.RUNTIME_ERROR and ev.check == "timing"
