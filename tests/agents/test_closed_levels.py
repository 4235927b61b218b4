"""No call goes to a level with nothing left to edit (issue 19, m22: 10 of 18
tvm-llvm calls did): a level declined on a candidate with the same text, a
level served by a correct child of a model's answer on such a candidate, a
graph that is one operator, a schedule whose PrimFuncs leave no loop to
transform. The search loop is run with scripted model answers and a backend
stub; the router and policy are asked directly on built trees."""

from __future__ import annotations

import json
from types import SimpleNamespace

from agent_fakes import G0, S0, Log, LoggedProvider, NoLog, ScriptedProvider, TVMStub as Backend, rec

from kstrata.agents.closed import ClosedLevels, level_key, structure_reason
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.llm_agent import REPEAT_NOTE
from kstrata.agents.memory import MemoryStore
from kstrata.agents.router import pending_requests, rebuild_needed
from kstrata.search.budget import Budget
from kstrata.search.loop import SearchSettings, optimize
from kstrata.search.tree import CandidateTree
from kstrata.store.run_store import RunStore
from kstrata.tasks.loader import resolve_task

LEVELS = ("graph", "schedule", "source")
ONE_OP = {"matmul": {"blocks": 1, "open_loops": 2}}
FOUR_BLOCKS = {"layer_norm": {"blocks": 4, "open_loops": 7}}
NO_LOOPS = {"softmax_rows": {"blocks": 1, "open_loops": 0}}


def schedule_answer(n: int) -> str:
    return (f"Parallelize the rows ({n}).\n\n```python\n# kstrata-tvm schedule\n\n\n"
            f"def schedule_matmul(sch):\n    i = sch.get_loops(sch.get_sblock(\"matmul\"))[0]\n"
            f"    sch.parallel(i)  # {n}\n```\n")


def graph_answer(n: int) -> str:
    return f"Fuse the row passes ({n}).\n\n```python\n# kstrata-tvm graph\n# build: symbolic\n# fused {n}\n```\n"


DECLINE = "DECLINE\nDIAGNOSIS: nothing more at this level: memory-bound, one pass over x."


class Evaluator:
    def evaluate(self, task, backend, sources):
        return {"verdict": "correct", "feedback": []}, None


def run(tmp_path, answers, structure, calls=8, evaluations=8, order=("schedule", "graph", "source"),
        evaluator=None):
    provider = LoggedProvider(list(answers))
    provider.log = Log()
    backend = Backend(structure)
    prop = HierarchicalProposer(backend, agents={lv: LevelAgent(provider, provider.log, lv) for lv in LEVELS},
                                memory=MemoryStore(":memory:"))
    res = optimize(resolve_task("gemv"), backend, prop, evaluator or Evaluator(), policy=prop.policy("greedy"),
                   budget=Budget(evaluations=evaluations, proposer_calls=calls), run_dir=tmp_path / "run",
                   router=prop.router, settings=SearchSettings(level_order=order))
    with RunStore.open(tmp_path / "run") as store:
        exps, spent = store.expansions(), store.spent()
    roles = [p[1]["content"].split("\n", 1)[0] for p in provider.prompts]
    return res, exps, spent, roles, provider


def test_a_one_op_graph_never_gets_a_graph_call(tmp_path):
    # graph first in the preference order: the skip is found on the first expansion and costs no call
    res, exps, spent, roles, provider = run(tmp_path, [schedule_answer(1), DECLINE], {None: ONE_OP},
                                            order=("graph", "schedule", "source"))
    assert roles and all("schedule-level agent" in r for r in roles), roles
    # then nothing is left open: the child's schedule was written by that call with no new feedback since
    # (rule 6); with budget left, the policy asks again at levels closed only by such a rule, and says so
    asked = [e for e in exps if e.level == "schedule"]
    assert not asked[0].policy_reason.startswith(REPEAT_NOTE)
    assert len(asked) > 1 and all(e.policy_reason.startswith(REPEAT_NOTE) for e in asked[1:])
    graph = [e for e in exps if e.level == "graph"]
    assert len(graph) <= 1  # at most the one skip, on the first candidate, before its structure was known
    for e in graph:
        rec_ = json.loads(e.error.split(": ", 1)[1])
        assert rec_["skipped"] and "one PrimFunc (matmul) with one block" in rec_["diagnosis"]
    assert spent.get("proposer_calls", 0) == len(provider.prompts)  # a skip is charged no call
    # the schedule child has the same graph text: its graph level was never asked either
    child = next(n for n in res.tree if n.level == "schedule")
    assert not child.expansions["graph"]


def test_after_the_schedule_role_declines_the_next_call_goes_elsewhere(tmp_path):
    res, exps, spent, roles, provider = run(tmp_path, [DECLINE, graph_answer(1), DECLINE, DECLINE],
                                            {None: FOUR_BLOCKS}, calls=4)
    root = res.tree.root
    asked = [(e.candidate, e.level) for e in exps]
    assert asked[0] == (root.hash, "schedule") and asked[1] == (root.hash, "graph")
    assert asked.count((root.hash, "schedule")) == 1  # never asked again about the same candidate
    # no pair (text at the level and above, level) is asked twice after a decline
    keys = []
    for e in exps:
        key = (level_key(res.tree[e.candidate].record.sources or _sources(tmp_path, e.candidate),
                         e.level), e.level)
        assert key not in keys, e
        keys.append(key)


def _sources(tmp_path, h):
    with RunStore.open(tmp_path / "run") as store:
        return store.sources(h)


def _tree_m22_layernorm():
    """root -> s1 (schedule, asked graph) -> g1 (graph, served it): m22 layernorm #1, #2."""
    root = rec("r", sources={"graph": G0, "schedule": S0})
    s1 = rec("s", "schedule", ("r",), sources={"graph": G0, "schedule": "S1"}, expansion_id=1,
             metadata={"cross_level_request": [{"level": "graph", "text": "fuse the rows into one PrimFunc"}]})
    g1 = rec("g", "graph", ("s",), sources={"graph": "G1", "schedule": "S1"}, expansion_id=2)
    return CandidateTree([root, s1, g1]), (root, s1, g1)


def test_a_level_served_on_a_candidate_with_the_same_text_is_not_asked_on_the_ancestor():
    tree, recs = _tree_m22_layernorm()
    prop = HierarchicalProposer(Backend({None: FOUR_BLOCKS}), agents={}, memory=None)
    for r in recs:
        prop.closed.observe(r.hash, r.sources)
        prop._text[r.hash] = frozenset(lv for lv, t in r.sources.items() if t)
    pol = prop.policy("greedy")
    pol.pre_search(tree, LEVELS)
    root, s1, g1 = (tree[r.hash] for r in recs)
    # the root's graph is s1's graph, whose request g1 served; the root's schedule made s1
    assert not pol.expandable(tree, root) and pol.open_levels(root) == []
    # s1's schedule was written by the call that made it, with no feedback since (rule 6)
    assert pol.open_levels(s1) == [] and "written" == prop.closed.closure(s1, "schedule", tree)[0]
    assert "served" in prop.closed.why(root, "graph", tree)
    # the served request is neither routed nor shown below it, nor on the ancestor
    assert pending_requests(tree, g1) == [] and pending_requests(tree, root) == []
    level, reason = prop.router(tree, s1, ["graph", "schedule"], LEVELS)
    assert "cross-level request" not in reason


def test_a_decline_closes_the_level_on_every_candidate_with_the_same_text():
    closed = ClosedLevels()
    # timed (a speedup each): rule 6 without lineage holds only where nothing is timed
    a = rec("a", sources={"graph": G0, "schedule": S0}, speedup=1.0)
    b = rec("b", "schedule", ("a",), sources={"graph": G0, "schedule": "S1"}, speedup=1.0)  # same graph
    c = rec("c", "graph", ("a",), sources={"graph": "G1", "schedule": S0}, speedup=1.0)
    for r in (a, b, c):
        closed.observe(r.hash, r.sources)
    closed.close(a.hash, "graph", "declined: one R.matmul")
    closed.close(a.hash, "schedule", "declined: memory-bound")
    assert closed.why(b, "graph") and closed.why(c, "graph") is None  # gemv m22 #4
    assert closed.why(b, "schedule") is None and closed.why(c, "schedule") is None
    # read back from the tree's stored declines too (a resumed run)
    from agent_fakes import declined_expansion

    tree = CandidateTree([a, b, c], [declined_expansion("a", "graph", "graph", "one R.matmul", [], 1)])
    fresh = ClosedLevels()
    for r in (a, b, c):
        fresh.observe(r.hash, r.sources)
    assert "declined" in fresh.why(tree[b.hash], "graph", tree) and fresh.why(tree[c.hash], "graph", tree) is None


def test_the_lowered_structure_closes_graph_and_schedule():
    assert "one PrimFunc (matmul) with one block" in structure_reason(ONE_OP, "graph")
    assert structure_reason(ONE_OP, "schedule") is None
    assert structure_reason(FOUR_BLOCKS, "graph") is None and structure_reason(FOUR_BLOCKS, "schedule") is None
    assert "already parallel, vectorized" in structure_reason(NO_LOOPS, "schedule")
    assert structure_reason(NO_LOOPS, "graph") and structure_reason(NO_LOOPS, "graph", handwritten=True) is None
    assert structure_reason(None, "graph") is None and structure_reason({}, "schedule") is None


def test_a_rebuild_is_routed_only_when_something_is_left_to_schedule():
    failed = [{"func": "softmax", "code": "schedule_softmax", "error": "no PrimFunc named 'softmax'"}]
    # m22 softmax #3: the new PrimFunc is one block under a parallel row loop
    assert rebuild_needed({"failed": failed, "structure": NO_LOOPS, "unscheduled": []}) is None
    # nothing changed: every step replayed and every PrimFunc with loops has steps
    assert rebuild_needed({"failed": [], "structure": FOUR_BLOCKS, "unscheduled": []}) is None
    assert "no longer apply" in rebuild_needed({"failed": failed, "structure": FOUR_BLOCKS, "unscheduled": []})
    assert "layer_norm" in rebuild_needed({"failed": [], "structure": FOUR_BLOCKS, "unscheduled": ["layer_norm"]})
    assert rebuild_needed({"failed": failed}) is not None  # an older report: the old rule
    # through the router: the graph change's node goes elsewhere, and its schedule level is closed
    root = rec("r", sources={"graph": G0, "schedule": S0})
    handwritten = "@I.ir_module\nclass Module:\n    @T.prim_func(private=True, s_tir=True)\n    def softmax_rows():"
    g = rec("g", "graph", ("r",), sources={"graph": handwritten, "schedule": S0}, expansion_id=1,
            metadata={"replay": {"failed": failed, "structure": NO_LOOPS, "unscheduled": [], "applied": 0}},
            findings=[TRAFFIC])  # new graph feedback on g: its graph level stays open (rule 6)
    tree = CandidateTree([root, g])
    prop = HierarchicalProposer(Backend({None: FOUR_BLOCKS}), agents={}, memory=None)
    for r in (root, g):
        prop.closed.observe(r.hash, r.sources)
    prop.closed.observe_structure(g.hash, NO_LOOPS)
    level, reason = prop.router(tree, tree[g.hash], ["graph", "schedule"], ("schedule", "graph", "source"))
    assert level == "graph" and "rebuild" not in reason


def test_a_closed_level_is_not_offered_for_cross_level_requests(tmp_path):
    provider = ScriptedProvider([schedule_answer(1)])
    backend = Backend({None: ONE_OP})
    prop = HierarchicalProposer(backend, agents={lv: LevelAgent(provider, NoLog(), lv) for lv in LEVELS},
                                memory=MemoryStore(":memory:"))
    root = rec("r", sources={"graph": G0, "schedule": S0})
    tree = CandidateTree([root])
    from kstrata.agents.base import ProposeContext

    ctx = ProposeContext(backend="tvm-llvm", levels=LEVELS, tree=tree, budget_left={"proposer_calls": 4})
    prop.propose(resolve_task("gemv"), tree[root.hash], {}, "schedule", context=ctx)
    text = "\n".join(m["content"] for m in provider.prompts[0])
    assert "CROSS-LEVEL REQUEST: <graph>" not in text
    # a direct graph expansion (a lookahead names its level) is a skip: no prompt, no call
    batch = prop.propose(resolve_task("gemv"), tree[root.hash], {}, "graph", context=ctx)
    assert batch.proposals == [] and batch.calls == [] and batch.skipped["skipped"]
    assert len(provider.prompts) == 1



def test_a_graph_change_that_leaves_no_loop_gets_no_schedule_call(tmp_path, monkeypatch):
    """m22 softmax #3: the graph role wrote one block under a parallel row loop;
    the replay report says so, the rebuild rule does not fire and the schedule
    level of that graph is closed: no schedule call, not even a skip."""
    handwritten = "# kstrata-tvm graph\n@T.prim_func(private=True, s_tir=True)\ndef softmax_rows(): ...\n"
    _rebuild(monkeypatch, NO_LOOPS)
    answer = f"One block per row.\n\n```python\n{handwritten}```\n"
    res, exps, spent, roles, provider = run(tmp_path, [answer, DECLINE, DECLINE], {None: FOUR_BLOCKS,
                                                                                   handwritten: NO_LOOPS},
                                            calls=3, order=("graph", "schedule", "source"))
    g = next(n for n in res.tree if n.level == "graph")
    assert g.record.metadata["replay"]["structure"] == NO_LOOPS
    assert not g.expansions["schedule"]  # neither a call nor a skip
    assert all(not (e.candidate == g.hash and e.level == "schedule") for e in exps)
    assert not any("rebuild" in (e.router_reason or "") for e in exps)


def test_a_decline_stored_on_the_tree_routes_elsewhere_without_the_proposers_memory():
    """A resumed run, or a router built alone: the decline stored with the
    expansion is enough for the policy and the router to leave the level out."""
    from agent_fakes import declined_expansion

    from kstrata.agents.router import FeedbackRouter

    root = rec("a", sources={"graph": G0, "schedule": S0})
    tree = CandidateTree([root], [declined_expansion("a", "schedule", "schedule", "memory-bound already", [], 1)])
    node = tree[root.hash]
    level, reason = FeedbackRouter(backend="tvm-llvm", levels=LEVELS)(tree, node, ["graph", "schedule"],
                                                                      ("schedule", "graph", "source"))
    assert level == "graph" and "not schedule" in reason
    pol = HierarchicalProposer(Backend({None: FOUR_BLOCKS}), agents={}, memory=None).policy("greedy")
    pol.pre_search(tree, LEVELS)
    assert pol.open_levels(node) == ["graph"]


# -- m23: the request/rebuild chain, superseded nodes, a request after a decline ------------------------------

MEMORY_BOUND = {"text": "memory-bound at 24% of peak bandwidth (2.6 of 11 GB/s): stream memory with contiguous, "
                        "vectorized accesses and enough parallel work", "level": "schedule", "confidence": 0.6}
TRAFFIC = {"text": "2.9x more DRAM bytes than the minimum (perf LLC misses x 64 B): inputs are read more than once "
                   "— consider fusing the passes so each input is read once", "level": "graph", "confidence": 0.7}
STALLED = {"text": "IPC 0.31: the core is mostly stalled (usually on memory) — block the loops for cache and "
                   "prefetch-friendly order", "level": "schedule", "confidence": 0.4}
CONTENDED = ("untrusted timing: contended: other processes kept 1.70 of 2 CPUs busy during this timing, which used 2 "
             "thread(s); candidate and baseline were not timed alike (timed 3 times in the search, every timing "
             "doubtful); not ranked as a speedup: re-time it on a quiet machine (`kstrata retime RUN`)")
REQUEST = "\nCROSS-LEVEL REQUEST: graph: fuse the row passes into one PrimFunc so x is read once\n"


class Timed:
    """Correct, with a speedup per design: the initial 0.5x, its schedule 0.6x,
    the fused graph 0.75x unscheduled and 1.5x scheduled; every design but the
    last has the profiler's memory-bound finding (tagged schedule)."""

    def evaluate(self, task, backend, sources):
        fused = "# fused" in sources["graph"]
        scheduled = "sch.parallel" in sources["schedule"]
        s = (1.5 if scheduled else 0.75) if fused else (0.6 if scheduled else 0.5)
        findings = [] if s == 1.5 else [MEMORY_BOUND]
        return {"verdict": "correct", "feedback": []}, {"median_ms": 1 / s, "findings": findings,
                                                         "speedups": {"eager": {"value": s, "ci": [s, s]}}}


def _rebuild(monkeypatch, structure):
    """A graph change whose replayed schedule lost its steps, leaving ``structure``
    (the rebuild rule fires when it has loops to schedule)."""
    failed = [{"func": "matmul", "code": "schedule_matmul", "error": "no PrimFunc named 'matmul'"}]

    def replay(self, task, parent, sources):
        return {**sources, "schedule": S0}, {"applied": 0, "funcs": sorted(structure), "failed": failed,
                                             "structure": structure, "unscheduled": []}

    monkeypatch.setattr(HierarchicalProposer, "_is_tvm", lambda self: True)
    monkeypatch.setattr(HierarchicalProposer, "_replay", replay)


def test_the_request_rebuild_chain_and_superseded_nodes_get_no_call(tmp_path, monkeypatch):
    """m23 layernorm #4, #5, #7 and softmax #4-#6: a schedule answer asks for
    a fused graph, the graph role writes it, the rebuild schedules it (1.5x).
    The chain's end has both levels just written (levels take turns asked
    both, both declined), and the nodes of the old graph are superseded by it
    (their memory-bound finding routed schedule calls there, both declined).
    None of these is asked while anything else is open: after the three calls that made the design,
    every later call is a repeat ask, marked so (the budget is spent, not left)."""
    _rebuild(monkeypatch, FOUR_BLOCKS)
    answers = [schedule_answer(1) + REQUEST, graph_answer(1), schedule_answer(3)] + [DECLINE] * 4
    res, exps, spent, roles, provider = run(tmp_path, answers, {None: FOUR_BLOCKS}, calls=7, evaluator=Timed())
    assert len(provider.prompts) > 3, [(e.candidate[:8], e.level, e.router_reason[:40]) for e in exps]
    assert all(e.policy_reason.startswith(REPEAT_NOTE) for e in exps[3:])
    assert ["schedule-level" in roles[0], "graph-level" in roles[1], "schedule-level" in roles[2]] == [True] * 3
    reasons = [e.router_reason for e in exps]
    assert reasons[1].startswith("cross-level request") and reasons[2].startswith("rebuild after graph change")
    end = next(n for n in res.tree if n.speedup == 1.5)
    assert spent.get("proposer_calls") == len(provider.prompts)
    prop = HierarchicalProposer(Backend({None: FOUR_BLOCKS}), agents={}, memory=None)
    prop.closed.lineage = True
    for lv in ("graph", "schedule"):  # closed by the chain, or, once asked again, by the role's decline
        assert prop.closed.closure(end, lv, res.tree)[0] in ("chain", "declined"), lv
    old = next(n for n in res.tree if n.speedup == 0.6)  # the requester: its graph was replaced
    assert prop.closed.closure(old, "schedule", res.tree)[0] in ("superseded", "declined")


def test_feedback_on_the_chains_end_still_routes_there():
    """The chain closes a level only while nothing points there: a profiler
    finding on the end node opens its schedule level (the frontier node gets
    the feedback), and the same finding on a superseded node does not."""
    root = rec("r", sources={"graph": G0, "schedule": S0}, speedup=0.5, findings=[MEMORY_BOUND])
    s = rec("s", "schedule", ("r",), sources={"graph": G0, "schedule": "S1"}, expansion_id=1, speedup=0.6,
            findings=[MEMORY_BOUND], metadata={"cross_level_request": [{"level": "graph", "text": "fuse"}]})
    g = rec("g", "graph", ("s",), sources={"graph": "G1", "schedule": S0}, expansion_id=2, speedup=0.75,
            metadata={"replay": {"failed": [{"func": "f", "code": "x"}]}})
    g.router_reason = "cross-level request from schedule-agent (ssssssss): fuse"
    e = rec("e", "schedule", ("g",), sources={"graph": "G1", "schedule": "S2"}, expansion_id=3, speedup=1.5,
            findings=[STALLED])  # located (the roofline's placement alone would be no news, rule 6)
    e.router_reason = "rebuild after graph change gggggggg: 1 schedule step(s) no longer apply"
    tree = CandidateTree([root, s, g, e])
    prop = HierarchicalProposer(Backend({None: FOUR_BLOCKS}), agents={}, memory=None)
    for r in (root, s, g, e):
        prop.closed.observe(r.hash, r.sources)
    end, old = tree[e.hash], tree[s.hash]
    assert prop.closed.why(end, "schedule", tree) is None and "counts as asked" in prop.closed.why(end, "graph", tree)
    level, reason = prop.router(tree, end, ["graph", "schedule"], LEVELS)
    assert level == "schedule" and reason.startswith("feedback: schedule")
    assert "superseded" in prop.closed.why(old, "schedule", tree)
    pol = prop.policy("greedy")
    pol.pre_search(tree, LEVELS)
    assert pol.open_levels(old) == [] and pol.open_levels(tree[root.hash]) == []
    # a graph change that reads slower than the node does not supersede it
    quiet_root = rec("r", sources={"graph": G0, "schedule": S0}, speedup=0.5)  # s's finding is new (rule 6)
    slow = CandidateTree([quiet_root, s, rec("g", "graph", ("s",), sources={"graph": "G1", "schedule": S0},
                                             expansion_id=2, speedup=0.4)])
    assert (prop.closed.closure(slow[s.hash], "schedule", slow) or ("open",))[0] != "superseded"


def test_a_request_made_after_a_decline_reopens_the_level_once(tmp_path):
    """m23 softmax #5: the graph role declined on a candidate, then the
    schedule role declined there too, with a new measurement and a graph
    request. The request reopens graph on that candidate once, with the
    request in its prompt; the graph role's second decline closes it again."""
    later = ("DECLINE\nDIAGNOSIS: arithmetic-bound now: exp is computed twice per element.\n"
             "CROSS-LEVEL REQUEST: graph: compute exp once per element, as in the softmax exemplar\n")
    res, exps, spent, roles, provider = run(tmp_path, [DECLINE, later, DECLINE, DECLINE], {None: FOUR_BLOCKS},
                                            calls=4, order=("graph", "schedule", "source"))
    root = res.tree.root.hash
    asked = [(e.candidate, e.level) for e in exps if e.n_new or e.error]
    assert asked[:3] == [(root, "graph"), (root, "schedule"), (root, "graph")], asked
    assert exps[2].router_reason.startswith("decline and request from schedule-agent")
    third = provider.prompts[2][1]["content"]
    assert "graph-level agent" in third and "compute exp once per element" in third
    assert "# Requests from other agents for this level" in third and "DECLINED [graph, graph-agent]" in third
    # the schedule prompt offered the request format for graph although graph had declined there
    assert "CROSS-LEVEL REQUEST: <graph>" in provider.prompts[1][1]["content"]
    assert len(provider.prompts) == 3 and spent.get("proposer_calls") == 3  # closed again: policy exhausted


def test_a_feedback_routed_graph_change_and_its_rebuild_or_lookahead_count_as_asked():
    """The chain may start with a change routed by feedback (not a request):
    the graph role wrote the graph that the rebuild (or a lookahead) then
    scheduled, so on the chain's end graph counts as asked too; on the
    graph change itself it stays open (nothing was chained there yet)."""
    root = rec("r", sources={"graph": G0, "schedule": S0}, speedup=0.5)
    g = rec("g", "graph", ("r",), sources={"graph": "G1", "schedule": S0}, expansion_id=1, speedup=0.4,
            metadata={"replay": {"failed": [{"func": "f", "code": "x"}]}})
    g.router_reason = "feedback: graph 0.60 from 1 item(s); top profiler (0.60): three passes over x"
    for reason in ("rebuild after graph change gggggggg: 1 schedule step(s) no longer apply",
                   "lookahead 1/1: schedule edit granted to graph change gggggggg, slower than its parent, "
                   "before it is judged"):
        e = rec("e", "schedule", ("g",), sources={"graph": "G1", "schedule": "S2"}, expansion_id=2, speedup=0.9)
        e.router_reason = reason
        tree = CandidateTree([root, g, e])
        closed = ClosedLevels(lineage=True)
        for r in (root, g, e):
            closed.observe(r.hash, r.sources)
        why = closed.why(tree[e.hash], "graph", tree)
        assert why is not None and "counts as asked" in why and "started the chain" in why, why
        assert "counts as asked" in closed.why(tree[e.hash], "schedule", tree)
        # the change itself is not chained; it is closed as written there with nothing new since (rule 6)
        assert closed.closure(tree[g.hash], "graph", tree)[0] == "written"
    # a schedule written by the built-in rules (no -agent role) at the start does not count
    g2 = rec("g", "graph", ("r",), sources={"graph": "G1", "schedule": S0}, expansion_id=1, speedup=0.4)
    g2.router_reason, g2.role = "no routed feedback; levels take turns", "builtin"
    e = rec("e", "schedule", ("g",), sources={"graph": "G1", "schedule": "S2"}, expansion_id=2, speedup=0.9)
    e.router_reason = "rebuild after graph change gggggggg: 1 schedule step(s) no longer apply"
    tree = CandidateTree([root, g2, e])
    assert ClosedLevels(lineage=True).why(tree[e.hash], "graph", tree) is None


# -- m25: the schedule role asked again about the schedule it had just written --------------------------------

def test_a_level_written_by_the_node_itself_closes_until_something_new_points_there():
    """m25 gemv #2 (and layernorm #4, softmax #4): the schedule role rfactored
    gemv on memory-bound advice; its child read "memory-bound at 22%" and was
    sent back to the same role with the same advice, which declined. Rule 6
    closes that level; a new kind of finding, a failed verdict or a request
    made on the node opens it."""
    root = rec("r", sources={"graph": G0, "schedule": S0}, speedup=0.5, findings=[dict(MEMORY_BOUND)])
    again = dict(MEMORY_BOUND, text=MEMORY_BOUND["text"].replace("24%", "41%").replace("2.6 of", "4.4 of"))
    s = rec("s", "schedule", ("r",), sources={"graph": G0, "schedule": "S1"}, expansion_id=1, speedup=1.1,
            findings=[again])
    tree = CandidateTree([root, s])
    closed = ClosedLevels(lineage=True)
    for r in (root, s):
        closed.observe(r.hash, r.sources)
    kind, why = closed.closure(tree[s.hash], "schedule", tree)
    assert kind == "written" and "schedule-agent wrote this schedule text (ssssssss)" in why
    assert closed.why(tree[s.hash], "graph", tree) is None  # the other level is not touched
    assert closed.offered(tree[s.hash], "schedule", tree)  # a request can still reopen it
    # a finding of another kind on the node is new: open
    s2 = rec("s", "schedule", ("r",), sources={"graph": G0, "schedule": "S1"}, expansion_id=1, speedup=1.1,
             findings=[again, {"text": "IPC 0.31: the core is mostly stalled (usually on memory) — block the "
                                       "loops for cache and prefetch-friendly order", "level": "schedule",
                               "confidence": 0.4}])
    assert closed.why(CandidateTree([root, s2])[s.hash], "schedule", CandidateTree([root, s2])) is None
    # a failed verdict after the change is new: open (the role fixes its own change)
    bad = rec("s", "schedule", ("r",), sources={"graph": G0, "schedule": "S1"}, expansion_id=1,
              verdict="incorrect")
    t3 = CandidateTree([root, bad])
    assert closed.why(t3[s.hash], "schedule", t3) is None
    # a request made on the node for its own level reopens it
    asked = rec("s", "schedule", ("r",), sources={"graph": G0, "schedule": "S1"}, expansion_id=1, speedup=1.1,
                findings=[again], metadata={"cross_level_request": [{"level": "schedule", "text": "unroll"}]})
    t4 = CandidateTree([root, asked])
    assert closed.why(t4[s.hash], "schedule", t4) is None
    # the built-in rules' schedule is not a role's: open
    ruled = rec("s", "schedule", ("r",), sources={"graph": G0, "schedule": "S1"}, expansion_id=1, speedup=1.1,
                findings=[again])
    ruled.role = "builtin"
    t5 = CandidateTree([root, ruled])
    assert closed.why(t5[s.hash], "schedule", t5) is None


def test_a_roofline_finding_of_a_contended_timing_neither_routes_nor_reopens():
    """m25: every reading was contended, and "memory-bound at 41% of peak"
    of such a reading routed a schedule call. A timing not believed gives
    the roofline no say: the finding routes nothing, so the level the node
    wrote stays closed, and the prompt leaves the numbers out."""
    from kstrata.agents.router import signals

    root = rec("r", sources={"graph": G0, "schedule": S0}, speedup=0.5)
    s = rec("s", "schedule", ("r",), sources={"graph": G0, "schedule": "S1"}, expansion_id=1, speedup=1.1,
            findings=[CONTENDED, dict(MEMORY_BOUND)])
    tree = CandidateTree([root, s])
    assert [x for x in signals(tree[s.hash]) if x.source == "profiler"] == []
    closed = ClosedLevels(lineage=True)
    for r in (root, s):
        closed.observe(r.hash, r.sources)
    assert closed.closure(tree[s.hash], "schedule", tree)[0] == "written"
    # believed, the same finding routes (to the schedule of a node no schedule role wrote: the root)
    trusted_root = rec("r", sources={"graph": G0, "schedule": S0}, speedup=0.5, findings=[dict(MEMORY_BOUND)])
    t2 = CandidateTree([trusted_root])
    assert [x.level for x in signals(t2[root.hash])] == ["schedule"]
    assert closed.why(t2[root.hash], "schedule", t2) is None


def test_where_nothing_is_timed_one_agent_is_not_asked_again_about_its_own_rewrite():
    """m26 triton-interp: the source role rewrote the shipped kernel (correct,
    untimed), then was asked about that rewrite with nothing new, three runs
    in a row, and declined each time. Without lineage (one agent) rule 6
    holds only where nothing is timed; a timed child stays open."""
    from kstrata.agents.llm_agent import LLMProposer

    root = rec("a", sources={"source": "K0"}, backend="triton-interp")
    child = rec("b", "source", ("a",), sources={"source": "K1"}, backend="triton-interp")
    tree = CandidateTree([root, child])
    interp = SimpleNamespace(name="triton-interp", levels=("source",), timing_meaningful=False)
    closed = LLMProposer(ScriptedProvider([]), NoLog(), backend=interp).closed
    for r in (root, child):
        closed.observe(r.hash, r.sources)
    assert closed.closure(tree[child.hash], "source", tree)[0] == "written"
    assert closed.why(tree[root.hash], "source", tree) is not None  # served: its child is the answer
    # on a backend that times, one agent iterating on its own kernel is the search: open
    timed = LLMProposer(ScriptedProvider([]), NoLog(), backend=Backend({})).closed
    assert timed.why(tree[child.hash], "source", tree) is None
    failed = rec("b", "source", ("a",), sources={"source": "K1"}, backend="triton-interp", verdict="incorrect")
    t3 = CandidateTree([root, failed])
    assert closed.why(t3[failed.hash], "source", t3) is None


def test_the_roofline_placement_is_not_news_to_the_role_that_wrote_the_level():
    """m26 layernorm #3: the schedule role's schedule read 1.25x, trusted, with
    "memory-bound at 47% of peak bandwidth: stream memory with contiguous,
    vectorized accesses" (its contended parent had no such finding); the role,
    asked again, declined: it had already done what the advice says."""
    root = rec("r", sources={"graph": G0, "schedule": S0}, speedup=0.5,
               findings=[CONTENDED, dict(MEMORY_BOUND)])
    s = rec("s", "schedule", ("r",), sources={"graph": G0, "schedule": "S1"}, expansion_id=1, speedup=1.25,
            findings=[dict(MEMORY_BOUND)])
    tree = CandidateTree([root, s])
    closed = ClosedLevels(lineage=True)
    for r in (root, s):
        closed.observe(r.hash, r.sources)
    assert closed.closure(tree[s.hash], "schedule", tree)[0] == "written"
    # a finding that locates something (measured traffic, here tagged schedule) is news
    located = dict(TRAFFIC, level="schedule")
    s2 = rec("s", "schedule", ("r",), sources={"graph": G0, "schedule": "S1"}, expansion_id=1, speedup=1.25,
             findings=[dict(MEMORY_BOUND), located])
    t2 = CandidateTree([root, s2])
    assert closed.why(t2[s.hash], "schedule", t2) is None


def test_the_backends_level_preference_decides_the_first_level(tmp_path):
    """Without ``level_order``, the backend's ``level_preference`` breaks the tie
    between levels asked equally often: tvm-cuda asks for schedule edits first
    (on the H200 its first two graph edits of rmsnorm used a 3-evaluation search)."""
    from kstrata.backends.registry import get_backend

    assert get_backend("tvm-cuda").level_preference[0] == "schedule"
    assert get_backend("tvm-llvm").level_preference is None
    firsts = []
    for i, pref in enumerate((("schedule", "graph", "source"), ("graph", "schedule", "source"), None)):
        provider = LoggedProvider([schedule_answer(1), graph_answer(1)])
        provider.log = Log()
        backend = Backend({None: FOUR_BLOCKS})
        backend.level_preference = pref
        prop = HierarchicalProposer(backend, agents={lv: LevelAgent(provider, provider.log, lv) for lv in LEVELS},
                                    memory=MemoryStore(":memory:"))
        optimize(resolve_task("gemv"), backend, prop, Evaluator(), policy=prop.policy("greedy"),
                 budget=Budget(evaluations=2, proposer_calls=1), run_dir=tmp_path / f"run{i}",
                 router=prop.router, settings=SearchSettings())
        with RunStore.open(tmp_path / f"run{i}") as store:
            firsts.append(store.expansions()[0].level)
    assert firsts == ["schedule", "graph", "graph"]  # None: the backend's levels in order
