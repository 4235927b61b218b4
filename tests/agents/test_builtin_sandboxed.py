"""The built-in TVM proposer's work on a candidate runs in a sandboxed process
(``kstrata.backends.tvm.isolated.schedule_expansion``): its candidates may be
an LLM's (``--proposer hierarchical``, a resumed run), and lowering a graph
parses TVMScript, the rules replay the schedule's Python. These tests check
that it still proposes what the in-process code proposed (computed here, in
this process, on kstrata's own trusted initial candidate), that results are
cached so a repeated expansion starts no new process, that hostile text never
runs here, and that MetaSchedule tunes inside the sandbox."""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from types import SimpleNamespace

import pytest

from kstrata.agents.base import ProposeContext
from kstrata.agents.builtin import TVMRulesProposer, _rng
from kstrata.backends import registry
from kstrata.backends.tvm import isolated
from kstrata.sandbox import IsolatedCallError, status
from kstrata.tasks.loader import resolve_task

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


@pytest.fixture(autouse=True)
def calls(monkeypatch, tmp_path):
    """A fresh parent-side cache, a private tune cache, and a log of sandboxed calls."""
    monkeypatch.setattr(isolated, "_VARIANTS", OrderedDict())
    monkeypatch.setenv("KSTRATA_CACHE", str(tmp_path / "cache"))
    log: list[tuple[str, dict]] = []
    real = isolated._call

    def counting(function, backend, timeout_s, **kwargs):
        log.append((function, kwargs))
        return real(function, backend, timeout_s, **kwargs)

    monkeypatch.setattr(isolated, "_call", counting)
    return log


@pytest.fixture(scope="module")
def rmsnorm():
    task, backend = resolve_task("rmsnorm"), registry.get_backend("tvm-llvm")
    return task, backend, backend.initial_sources(task)


def _in_process_variants(task, backend, sources):
    """What the proposer computed before the move, in this process (trusted text only)."""
    from kstrata.backends.tvm.rules import schedule_variants
    from kstrata.backends.tvm.schedule import replay_schedule

    lowered = backend.lower(task, sources, task.nominal_shape)
    small = [backend.lower(task, sources, shape).funcs for shape in task.small_shapes]
    generic = backend.lower(task, sources, task.nominal_shape, symbolic=True).funcs

    def program(text):  # what the symbolic build runs
        funcs, _, failed = replay_schedule(generic, text)
        return None if failed else "\n".join(funcs[n].script() for n in sorted(funcs))

    seen, out = {program(sources.get("schedule", ""))}, []
    for v in schedule_variants(lowered.funcs, sources.get("schedule", ""), gpu=False):
        if any(replay_schedule(funcs, v.text)[2] for funcs in small):  # as the sandbox filters them
            continue
        key = program(v.text)  # and one variant per program of the symbolic build
        if key is None or key not in seen:
            seen.add(key)
            out.append({"text": v.text, "rule": v.rule, "func": v.func, "description": v.description})
    return out


def _in_process_proposals(variants, sources, rng, per_expansion):
    """The old ordering: recipes first, a seeded shuffle of the single steps, the first few."""
    from kstrata.backends.tvm.rules import COMPOSITE

    composite = [v for v in variants if all(r in COMPOSITE for r in v["rule"].split("+"))]
    single = [v for v in variants if v not in composite]
    rng.shuffle(single)
    return [({**sources, "schedule": v["text"]}, f"{v['rule']} on {v['func']}: {v['description']}")
            for v in (composite + single)[:per_expansion]]


def _candidate(sources, h="c0"):
    return SimpleNamespace(sources=dict(sources), hash=h)


def _context(step=0):
    return ProposeContext(backend="tvm-llvm", levels=("graph", "schedule", "source"), step=step, seed=0)


def test_sandboxed_variants_and_proposals_match_the_in_process_rules(rmsnorm, calls):
    task, backend, src = rmsnorm
    sources = {k: v for k, v in src.items() if k != "source"}
    expected = _in_process_variants(task, backend, sources)
    assert expected, "the rules find nothing to do on rmsnorm's initial candidate"

    got, tuned = isolated.schedule_expansion(task, sources, "tvm-llvm")
    assert got == expected and tuned is None
    assert [f for f, _ in calls] == ["schedule_expansion_inside"]

    # the proposer: same proposals, in the same order, for the same seed, step and candidate
    prop = TVMRulesProposer(backend, tune_trials=0)
    for step, h in ((0, "c0"), (3, "c1")):
        cand = _candidate(src, h)
        batch = prop.propose(task, cand, None, "schedule", context=_context(step))
        want = _in_process_proposals(expected, sources, _rng(_context(step), cand), prop.per_expansion)
        assert [(p.sources, p.rationale) for p in batch.proposals] == want
        assert all(p.level == "schedule" and p.role == "schedule-rules" for p in batch.proposals)
    # every expansion of that candidate came from the parent's cache: still one sandboxed call
    assert len(calls) == 1

    # a candidate with a schedule (the first recipe, itself made by kstrata's rules)
    child = {**sources, "schedule": expected[0]["text"]}
    assert isolated.schedule_expansion(task, child, "tvm-llvm")[0] == _in_process_variants(task, backend, child)
    assert len(calls) == 2


def test_the_cache_key_has_backend_task_graph_and_schedule(rmsnorm, calls, monkeypatch):
    task, _, src = rmsnorm
    sources = {k: v for k, v in src.items() if k != "source"}
    fake = {"variants": [{"text": "t", "rule": "r", "func": "f", "description": "d"}]}
    monkeypatch.setattr(isolated, "_call", lambda function, backend, timeout_s, **kw: calls.append(
        (function, kw)) or fake)
    isolated.schedule_expansion(task, sources, "tvm-llvm")
    isolated.schedule_expansion(task, dict(sources), "tvm-llvm")              # same text: cached
    isolated.schedule_expansion(task, {**sources, "source": "x"}, "tvm-llvm")  # the source level plays no part
    assert len(calls) == 1
    isolated.schedule_expansion(task, {**sources, "schedule": "# other"}, "tvm-llvm")
    isolated.schedule_expansion(task, {**sources, "graph": sources["graph"] + "\n"}, "tvm-llvm")
    isolated.schedule_expansion(task, sources, "tvm-opencl", gpu=True)
    isolated.schedule_expansion(resolve_task("relu"), sources, "tvm-llvm")
    assert len(calls) == 5


def test_a_forged_answer_is_refused(rmsnorm, monkeypatch):
    task, _, src = rmsnorm
    for forged in ({"variants": [{"text": 1}]}, {"variants": "x"}, ["x"],
                   {"variants": [{"text": "t" * (isolated.MAX_TEXT_CHARS + 1), "rule": "r", "func": "f",
                                  "description": "d"}]}):
        monkeypatch.setattr(isolated, "_call", lambda *a, forged=forged, **kw: forged)
        with pytest.raises(IsolatedCallError, match="malformed"):
            isolated.schedule_expansion(task, src, "tvm-llvm")


# -- hostile text ----------------------------------------------------------------------------
PAYLOAD = ("import os\nos.makedirs(os.path.dirname(MARKER), exist_ok=True)\n"
           "open(MARKER, 'a').write('pid=%d\\n' % os.getpid())\n")


def _hostile_graph(graph: str, marker: str, tail: str = "") -> str:
    """Case 01's payload in a ``R.func_attr`` (TVMScript's parser evaluates it)."""
    code = f"MARKER = {marker!r}\n" + PAYLOAD + tail
    g = graph.replace("R.func_attr({", f"R.func_attr({{\"note\": print.__self__.exec({code!r}) or 1, ", 1)
    assert g != graph
    return g


def test_hostile_graph_and_schedule_run_only_in_the_sandbox(rmsnorm, tmp_path, calls):
    from kstrata.backends.tvm.schedule import render_schedule

    task, backend, src = rmsnorm
    marker = tmp_path / "probe" / "marker.txt"
    good = _in_process_variants(task, backend, src)
    func = good[0]["func"] if good[0]["func"] != "*" else re.search(r"def schedule_(\w+)", good[0]["text"])[1]
    schedule = render_schedule({func: [f"open({str(marker)!r}, 'a').write('schedule step\\n')"]})
    sources = {"graph": _hostile_graph(src["graph"], str(marker)), "schedule": schedule}
    prop = TVMRulesProposer(backend, tune_trials=0)
    batch = prop.propose(task, _candidate(sources), None, "schedule", context=_context())
    assert not marker.exists() and not marker.parent.exists()
    assert batch.proposals and len(calls) == 1
    # the variants keep the candidate's graph and extend its schedule text
    assert all(p.sources["graph"] == sources["graph"] for p in batch.proposals)

    # a payload that raises: the expansion's error names another process's pid
    raising = {"graph": _hostile_graph(src["graph"], str(marker),
                                       "raise RuntimeError('payload ran in pid %d' % os.getpid())\n")}
    with pytest.raises(IsolatedCallError, match=r"payload ran in pid \d+") as e:
        prop.propose(task, _candidate(raising, "c2"), None, "schedule", context=_context())
    assert int(re.search(r"pid (\d+)", str(e.value))[1]) != os.getpid()
    assert not marker.exists()


# -- MetaSchedule ------------------------------------------------------------------------------
@pytest.mark.slow
def test_metaschedule_tunes_in_the_sandbox_and_is_cached_here(tmp_path, calls, monkeypatch):
    from kstrata.backends.tvm import tune as tune_mod

    # tuning in this process would be the old path: it must not happen
    monkeypatch.setattr(tune_mod, "tune", lambda *a, **k: pytest.fail("tuned in kstrata's own process"))
    task, backend = resolve_task("relu"), registry.get_backend("tvm-llvm")   # one PrimFunc: the quickest
    src = {k: v for k, v in backend.initial_sources(task).items() if k != "source"}
    prop = TVMRulesProposer(backend, tune_trials=1)
    monkeypatch.setattr(prop, "_tune_shape", lambda t: {"B": 8, "D": 512})  # a small shape: quick trials
    batch = prop.propose(task, _candidate(src), None, "schedule", context=_context())
    # two processes: the variants (the candidate's schedule replayed), then tuning given the graph alone
    assert len(calls) == 2 and "tune" not in calls[0][1] and calls[1][1]["tune"]["trials"] == 1
    assert calls[1][1]["sources"] == {"graph": src["graph"]}
    first = batch.proposals[0]
    assert first.role == "metaschedule", [p.role for p in batch.proposals]
    assert "def schedule_relu" in first.sources["schedule"] and first.sources["graph"] == src["graph"]
    # cached where the MetaSchedule baseline looks, under the key computed here
    files = list((tmp_path / "cache" / "tvm_tune").glob("*.json"))
    assert [f.stem for f in files] == [tune_mod.cache_key(task, src["graph"], task.full_shape({"B": 8, "D": 512}),
                                                          backend.target(), 1)]
    # the graph is tuned once per proposer; a new proposer finds the tuned schedule in the cache
    prop.propose(task, _candidate(src, "c9"), None, "schedule", context=_context(1))
    again = TVMRulesProposer(backend, tune_trials=1)
    monkeypatch.setattr(again, "_tune_shape", prop._tune_shape)
    b2 = again.propose(task, _candidate(src), None, "schedule", context=_context())
    assert len(calls) == 2
    assert b2.proposals[0].sources == first.sources


def test_no_variant_names_a_block_its_schedule_makes_only_at_some_shapes(rmsnorm, calls):
    """A schedule that rfactors only where the reduction extent divides 16 has a ``lv_red_rf``
    block at the nominal D=4096 but not at D=77 (a small shape): a variant that names that block
    failed to build there (compile_error in 2 of 12 evaluations of the quick start's run,
    2026-12-04). The expansion keeps only variants that replay at every small shape."""
    from kstrata.backends.tvm.lower import with_fusion
    from kstrata.backends.tvm.rules import schedule_variants
    from kstrata.backends.tvm.schedule import replay_schedule

    task, backend, sources = rmsnorm
    unfused = with_fusion(sources["graph"], "none")  # (an LLM's edit; the CPU graph rules propose 'rows' here)
    parent = {**sources, "graph": unfused, "schedule": PARENT_RFACTOR_IF_DIVIDES}  # has a PrimFunc 'mean'
    small = [backend.lower(task, parent, shape).funcs for shape in task.small_shapes]
    assert not any(replay_schedule(funcs, PARENT_RFACTOR_IF_DIVIDES)[2] for funcs in small)  # the parent is fine
    unfiltered = [v.text for v in schedule_variants(backend.lower(task, parent, task.nominal_shape).funcs,
                                                    PARENT_RFACTOR_IF_DIVIDES)]
    assert any("lv_red_rf" in t for t in unfiltered)  # the rules do propose such variants at the nominal shape
    got, _ = isolated.schedule_expansion(task, parent, "tvm-llvm")
    assert got, "nothing left to propose"
    for v in got:
        assert all(not replay_schedule(funcs, v["text"])[2] for funcs in small), v["description"]


PARENT_RFACTOR_IF_DIVIDES = """# kstrata-tvm schedule: one `def schedule_<primfunc>(sch)` per scheduled PrimFunc


def schedule_mean(sch):
    b = sch.get_sblock("lv_red", func_name="main")
    loops = sch.get_loops(b)
    r = loops[2]
    if isinstance(sch.get(r).extent, tvm.tirx.IntImm) and int(sch.get(r).extent) % 16 == 0:
        ro, ri = sch.split(r, factors=[None, 16])
        rfl = sch.get_loops(sch.rfactor(ri, 0))
        sch.vectorize(rfl[-1])
        outer = sch.fuse(*rfl[:2])
        sch.reverse_compute_at(b, outer)
    else:
        rfl = sch.get_loops(b)
        outer = sch.fuse(*rfl[:2])
    sch.parallel(outer)
    sch.reverse_compute_at(sch.get_sblock("T_divide", func_name="main"), outer)
"""
