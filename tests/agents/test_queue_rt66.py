"""Queue round rt66 (an engineer as the model behind ``--llm queue:DIR``, from
the prompts alone): what the prompts lacked or said wrongly, rendered through
the agents' own path and asserted present now."""

from __future__ import annotations

import pytest
from agent_fakes import G0, S0, NoLog, ScriptedProvider, TVMStub, rec

from kstrata.agents.base import ProposeContext
from kstrata.agents.hierarchical import HierarchicalProposer, LevelAgent
from kstrata.agents.llm_agent import LLMProposer
from kstrata.agents.memory import MemoryStore
from kstrata.agents.router import Declined
from kstrata.backends.registry import get_backend
from kstrata.search.tree import CandidateTree
from kstrata.tasks.loader import resolve_task

DECLINE = "DECLINE\nDIAGNOSIS: looking"


def _failed(h: str, level: str, parent: str, shape: dict, **kw):
    """A child that failed a public test, its evidence as the run store gives it back: keys sorted."""
    r = rec(h, level, (parent,), verdict="incorrect", rationale=f"change {h}", **kw)
    r.evaluation.check = "tolerance"
    r.evaluation.evidence = {"message": "4008 of 8192 elements differ", "stage": "public",
                             "test": {"distribution": "normal", "seed": 0, "shape": dict(sorted(shape.items()))}}
    return r


def test_a_failed_public_test_read_back_from_the_store_is_named_in_the_task_order():
    """quantize_per_channel (N, K) on triton-interp: one prompt read "the public
    test at N=64, K=128" for the latest failure (its evidence fresh from the
    judge) and "at K=128, N=64" for an older one read back from the run store,
    which writes JSON with sorted keys. Every place a prompt names a failed
    test (history, earlier answers, the last failure) now uses the task's order."""
    task = resolve_task("quantize_per_channel")
    backend = get_backend("triton-interp")
    start = backend.initial_sources(task)
    shape = {"N": 64, "K": 128}
    root = rec("a", sources=start, backend="triton-interp")
    good = rec("b", "source", ("a",), sources=start, backend="triton-interp", rationale="tiles")
    other = _failed("c", "source", "a", shape, sources=start, backend="triton-interp")  # elsewhere in the run
    latest = _failed("d", "source", "b", shape, sources=start, backend="triton-interp")  # this candidate's
    tree = CandidateTree([root, good, other, latest])
    provider = ScriptedProvider([DECLINE])
    prop = LLMProposer(provider, NoLog(), backend=backend)
    with pytest.raises(Declined):
        prop.propose(task, tree["b" * 8], tree["b" * 8].feedback(), "source",
                     context=ProposeContext(backend="triton-interp", levels=backend.levels, tree=tree))
    text = provider.prompts[0][1]["content"]
    assert "K=128, N=64" not in text, text
    # the latest failure (section and earlier answers) and the older one elsewhere (history)
    assert text.count("at the public test at N=64, K=128") >= 3, text


def test_the_hierarchical_history_names_a_failed_test_in_the_task_order():
    """The level agents' history (HierarchicalProposer.history) reads the same stored evidence."""
    task = resolve_task("gemv")  # M, K
    shape = {"M": 5, "K": 77}
    root = rec("a", sources={"graph": G0, "schedule": S0})
    good = rec("b", "graph", ("a",), sources={"graph": G0 + "# fused\n", "schedule": S0})
    other = _failed("c", "schedule", "a", shape, sources={"graph": G0, "schedule": S0 + "# x\n"})
    tree = CandidateTree([root, good, other])
    provider = ScriptedProvider([DECLINE])
    prop = HierarchicalProposer(TVMStub({None: {"matmul": {"blocks": 1, "open_loops": 2}}}),
                                agents={lv: LevelAgent(provider, NoLog(), lv) for lv in ("graph", "schedule")},
                                memory=MemoryStore(":memory:"))
    ctx = ProposeContext(backend="tvm-llvm", levels=("graph", "schedule", "source"), tree=tree,
                         budget_left={"proposer_calls": 4})
    with pytest.raises(Declined):
        prop.propose(task, tree["b" * 8], {}, "schedule", context=ctx)
    text = provider.prompts[0][1]["content"]
    assert "at the public test at M=5, K=77" in text and "K=77, M=5" not in text, text


ROWS_GRAPH = '''# kstrata-tvm graph
# inputs: 1
# params:
# output: single
# fusion: rows
# shape: symbolic
# build: symbolic
# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

s27 = TypeVar("s27")
s77 = TypeVar("s77")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fake_quant_rows(var_x: T.handle, var_y: T.handle):
        T.func_attr({"tirx.noalias": True})
        n, d = T.int64(), T.int64()
        x = T.match_buffer(var_x, (n, d), "float32")
        y = T.match_buffer(var_y, (n, d), "float32")
        amax = T.sblock_alloc_buffer((n,), "float32")
%s
    @R.function
    def main(x: R.Tensor((s77, s27), dtype="float32")) -> R.Tuple(R.Tensor((s77, s27), dtype="float32")):
        R.func_attr({"tir_var_lower_bound": {"s27": 1, "s77": 1}})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.fake_quant_rows, (x,), out_ty=R.Tensor((s77, s27), dtype="float32"))
            gv: R.Tuple(R.Tensor((s77, s27), dtype="float32")) = (lv,)
            R.output(gv)
        return gv
'''
Y = ("y[vi, vj] = T.max(T.min(T.nearbyint(x[vi, vj] / (amax[vi] / T.float32(127.0))), T.float32(127.0)), "
     "T.float32(-127.0)) * (amax[vi] / T.float32(127.0))")
SHARED_ROW = f'''        for i in range(n):
            for k in range(d):
                with T.sblock("amax"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        amax[vi] = T.min_value("float32")
                    amax[vi] = T.max(amax[vi], T.fabs(x[vi, vk]))
            for j in range(d):
                with T.sblock("y"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    {Y}
'''
OWN_NESTS = f'''        for i, k in T.grid(n, d):
            with T.sblock("amax"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    amax[vi] = T.min_value("float32")
                amax[vi] = T.max(amax[vi], T.fabs(x[vi, vk]))
        for i, j in T.grid(n, d):
            with T.sblock("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                {Y}
'''


def test_the_gpu_graph_sheet_says_which_hand_written_primfunc_the_default_gpu_schedule_takes():
    """fake_quant_per_token on tvm-opencl: the graph sheet advised blocks under a
    shared row loop (right on tvm-llvm); on a GPU target no dlight rule schedules
    that form, the graph change was a compile_error "no dlight GPU rule schedules
    PrimFunc fake_quant_rows", and a failed child is never expanded, so the
    schedule level could not rescue it. The same PrimFunc with each block in its
    own loop nest is scheduled (a work-group per row). The sheet now says so on
    GPU targets, and keeps its CPU advice on tvm-llvm."""
    pytest.importorskip("tvm")
    from kstrata.agents.prompt import api_sheet
    from kstrata.backends.tvm.schedule import ScheduleTextError, default_gpu_schedule

    backend = get_backend("tvm-opencl")
    task = resolve_task("fake_quant_per_token")

    def default(body: str) -> str:
        lowered = backend.lower(task, {"graph": ROWS_GRAPH % body}, dict(task.small_shapes[0]))
        return default_gpu_schedule(lowered.funcs, backend.target())

    with pytest.raises(ScheduleTextError, match="no dlight GPU rule schedules PrimFunc fake_quant_rows"):
        default(SHARED_ROW)
    assert 'thread_axis="blockIdx.x"' in default(OWN_NESTS)
    for name in ("tvm-opencl", "tvm-cuda"):
        sheet = api_sheet(name, "graph")
        assert "no dlight GPU rule schedules PrimFunc" in sheet and "`for i, k in T.grid(n, d):`" in sheet
        assert "under a shared row loop, and leave parallel rows" not in sheet
    cpu = api_sheet("tvm-llvm", "graph")
    assert "under a shared row loop, and leave parallel rows" in cpu and "dlight" not in cpu


def test_a_tvm_pass_error_names_its_cause_and_the_gpu_sheet_the_reduction_identity():
    """The same graph in separate loop nests, its absmax started at 0.0: the
    verdict read only "TVM build failed: Error in pass: _pipeline", TVM's cause
    ("No matched reducer ...", the first line of its message) cut off, so the
    next prompt could not say where the fault was. The cause is kept now, and
    the GPU graph sheet says a reduction starts at its combiner's identity."""
    pytest.importorskip("tvm")
    from kstrata.agents.prompt import api_sheet
    from kstrata.backends.base import CandidateLoadError

    backend = get_backend("tvm-opencl")
    task = resolve_task("fake_quant_per_token")
    zero_init = OWN_NESTS.replace('T.min_value("float32")', "T.float32(0.0)")
    assert "amax[vi] = T.float32(0.0)" in zero_init
    with pytest.raises(CandidateLoadError) as err:
        backend.generate_source(task, {"graph": ROWS_GRAPH % zero_init}, dict(task.small_shapes[0]))
    assert "No matched reducer for the identity and the combiner" in str(err.value), str(err.value)
    assert "(Error in pass: _pipeline)" in str(err.value)
    assert "`T.min_value(\"float32\")` for a max" in api_sheet("tvm-opencl", "graph")


def test_a_tilelang_source_prompt_gives_no_tvm_schedule_request_as_its_example():
    """fused_exp_mean on tilelang-c: the source prompt's example request to the
    schedule level read "parallelize the row loop of the new PrimFunc and
    vectorize its inner loop by 16", a TVM schedule; TileLang's schedule level is
    a JSON of the `SCHEDULE` keys the source reads, and the C target has no
    parallel loops."""
    backend = get_backend("tilelang-c")
    task = resolve_task("fused_exp_mean")
    root = rec("a", sources=backend.initial_sources(task), backend="tilelang-c")
    tree = CandidateTree([root])
    provider = ScriptedProvider([DECLINE])
    prop = LLMProposer(provider, NoLog(), backend=backend)
    with pytest.raises(Declined):
        prop.propose(task, tree["a" * 8], tree["a" * 8].feedback(), "source",
                     context=ProposeContext(backend="tilelang-c", levels=backend.levels, tree=tree))
    system = provider.prompts[0][0]["content"]
    assert "CROSS-LEVEL REQUEST: schedule: set the rows-per-block key the source reads from `SCHEDULE` to 4" in system
    assert "PrimFunc" not in system


def test_a_rerun_is_told_how_the_earlier_run_fixed_a_failed_change():
    """add_layernorm rerun on tvm-llvm with the first run's memory: the graph
    prompt listed the first run's failed graph change (wrong at D=77) but not
    that a later graph change of that run, from the same graph text, passed
    (its `< d` tail mask): no timing was trusted, so no skill crossed runs.
    The lesson now carries what the fix said."""
    from test_memory_lessons import ANSWER, ROOT, _ctx, _proposer, _second_run_prompt

    from kstrata.search.candidate import content_hash, normalize_sources
    from kstrata.store.records import EvaluationRecord

    task, memory = resolve_task("log_softmax"), MemoryStore(":memory:")
    fix_answer = ANSWER.replace("The max pass skips the tail", "The tail is masked with < d now").replace(
        "(x,))", "(x, 1))")
    prop, _ = _proposer(memory, [ANSWER, fix_answer])
    root = rec("a", sources=ROOT, created=1.0)
    tree = CandidateTree([root])
    made = []
    for i, why in enumerate(("The max pass skips the tail: one PrimFunc per row.", "The tail is masked with < d now.")):
        (p,) = prop.propose(task, tree["a" * 8], {}, "graph", context=_ctx(tree)).proposals
        n = rec("xy"[i], "graph", ("a",), verdict="correct" if i else "incorrect", expansion_id=i + 1,
                rationale=why, created=2.0 + i)
        n.hash = content_hash(normalize_sources(p.sources), "tvm-llvm", task.digest)
        if not i:
            n.evaluation = EvaluationRecord(verdict="incorrect", check="tolerance", evidence={"message": "wrong"})
        made.append(n)
    prop.learn(CandidateTree([root, *made]), task)
    user = _second_run_prompt(memory, task, created=5.0)
    section = user.split("# What failed in earlier runs of this task", 1)[1].split("\n# ", 1)[0]
    assert "The max pass skips the tail" in section, section
    assert "fixed later in that run (correct) by: The tail is masked with < d now." in section, section


ROUNDING = '''
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from kstrata.backends.triton.libdevice import interpret_libdevice

interpret_libdevice()  # as kstrata's triton-interp workers do


@triton.jit
def k(x_ptr, r_ptr, t_ptr, a_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(r_ptr + offs, libdevice.rint(x), mask=m)
    tl.store(t_ptr + offs, x.to(tl.int8), mask=m)
    tl.store(a_ptr + offs, libdevice.round(x), mask=m)


x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 2.7])
r, t, a = torch.empty_like(x), torch.empty(x.shape, dtype=torch.int8), torch.empty_like(x)
k[(1,)](x, r, t, a, x.numel(), BLOCK=8)
print(r.tolist(), t.tolist(), a.tolist())
'''


def test_the_triton_sheet_says_how_to_round_half_to_even_on_a_rounding_task():
    """quantize_per_channel on triton-interp: the sheet named no rounding, and an
    answer that let `.to(tl.int8)` round (it truncates) failed on half of the
    elements. On a task that rounds, the sheet now names `libdevice.rint` (half
    to even, as torch.round; checked under kstrata's interpreter here), the
    truncating cast and `libdevice.round` (half away from zero); a task that
    does not round is not told."""
    import os
    import subprocess
    import sys

    from kstrata.agents.prompt import api_sheet, public_reference

    out = subprocess.run([sys.executable, "-c", ROUNDING], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TRITON_INTERPRET": "1", "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ("[0.0, 2.0, 2.0, -0.0, -2.0, -3.0, 3.0] [0, 1, 2, 0, -1, -2, 2] "
                                  "[1.0, 2.0, 3.0, -1.0, -2.0, -3.0, 3.0]").split(), out.stdout
    line = "torch.round's half to even is `libdevice.rint(x)`"
    quant = public_reference(resolve_task("quantize_per_channel").source)
    assert line in api_sheet("triton-interp", "source", quant)
    assert line not in api_sheet("triton-interp", "source", public_reference(resolve_task("softmax").source))


def test_the_graph_sheet_says_rows_fusion_leaves_an_epilogue_after_a_max_apart():
    """fake_quant_per_token on tvm-opencl: the start's header is `# fusion: rows`,
    which the sheet said makes "a row's producers, reduction and epilogue" one
    PrimFunc, yet its absmax and the quantize epilogue were two PrimFuncs (on
    tvm-llvm too): rows fusion takes a reduction's producers; an epilogue joins
    only where TVM fused it in the first place (after a mean, inside
    layer_norm), not after a max."""
    pytest.importorskip("tvm")
    import re

    from kstrata.agents.prompt import api_sheet

    for name in ("tvm-llvm", "tvm-opencl"):
        backend = get_backend(name)
        funcs = {}
        for task_name in ("fake_quant_per_token", "rmsnorm"):
            task = resolve_task(task_name)
            graph = re.sub(r"# fusion: \S+", "# fusion: rows", backend.initial_sources(task)["graph"])
            funcs[task_name] = list(backend.lower(task, {"graph": graph}, dict(task.small_shapes[0])).funcs)
        assert sorted(funcs["fake_quant_per_token"]) == ["fused_divide_divide1_tir_round_tir_clip_multiply",
                                                         "fused_tir_abs_max"], funcs
        assert len(funcs["rmsnorm"]) == 1, funcs  # a mean's epilogue joins
        assert "and not after `R.max`: fake_quant_per_token's `abs` joins its `max`" in api_sheet(name, "graph")
