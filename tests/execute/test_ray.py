"""The Ray executor in local mode on this CPU: same results as the local pool,
a Ray worker killed mid-call is retried, ``--executor`` parsing."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

import kstrata
from kstrata.execute import LocalExecutor
from kstrata.execute.select import Caller, ExecutorSpecError, make_executor, parse_executor
from kstrata.tasks.loader import resolve_task
from kstrata.verify import verify_candidate

ray = pytest.importorskip("ray")
from kstrata.execute.ray_executor import RayCallResult, RayExecutor

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
SRC = str(Path(kstrata.__file__).resolve().parents[1])

#: imported by the kstrata worker inside a Ray worker: on the first call (no
#: marker yet) it SIGKILLs its parent, the Ray worker process, mid-call, then
#: leaves once it is orphaned
KILLER = '''
import os, signal, time
from pathlib import Path

def double(x, marker=None):
    if marker is not None and not Path(marker).exists():
        parent = os.getppid()
        Path(marker).write_text(str(parent))
        os.kill(parent, signal.SIGKILL)
        while os.getppid() == parent:
            time.sleep(0.05)
        os._exit(1)
    return 2 * x
'''


@pytest.fixture(scope="module")
def ray_local():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_parse_and_bad_addresses():
    assert parse_executor("local") == ("local", None)
    assert parse_executor("ray") == ("ray", None)
    assert parse_executor("ray:auto") == ("ray", "auto")
    assert parse_executor("ray:10.0.0.5:6379") == ("ray", "10.0.0.5:6379")
    assert parse_executor("ray:ray://head:10001") == ("ray", "ray://head:10001")
    for bad in ("dask", "local:x", "ray:", "ray:head", "ray:head:port", "ray:head:70000"):
        with pytest.raises(ExecutorSpecError, match="executor|Ray address"):
            parse_executor(bad)
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # the module's Ray fixture may or may not be up when this runs (the test
    # order puts slow tests first): a refused address leaves Ray as it found it
    before = ray.is_initialized()
    with pytest.raises(ExecutorSpecError, match=f"no Ray cluster answers at 127.0.0.1:{port}"):
        make_executor(f"ray:127.0.0.1:{port}")
    assert ray.is_initialized() == before


def test_same_call_results_as_local(ray_local):
    calls = [(("math:sqrt", 16.0), 30), (("math:sqrt", -1.0), 30), (("os:abort",), 30),
             (("time:sleep", 30), 2)]
    with LocalExecutor(size=2) as local, RayExecutor() as remote:
        assert remote.options("kstrata.verify.runner:run_protocol") == {"num_cpus": 1, "num_gpus": 0}
        futures = [(local.submit(*c, timeout_s=t), remote.submit(*c, timeout_s=t)) for c, t in calls]
        pairs = [(a.result(), b.result()) for a, b in futures]
    assert [b.kind for _, b in pairs] == ["ok", "exception", "crash", "timeout"]
    for a, b in pairs:
        assert isinstance(b, RayCallResult) and b.node_id and b.hostname
        assert (a.ok, a.kind, a.value, a.error.split(":")[0]) == (b.ok, b.kind, b.value, b.error.split(":")[0])
    assert ray.is_initialized()  # joined the fixture's Ray; closing did not stop it


@pytest.mark.heavy  # test_same_call_results_as_local keeps the equivalence in the CI run, on one call
def test_same_verdicts_local_and_ray(ray_local, tmp_path, monkeypatch):
    import json

    from kstrata.execute.ray_executor import CALL_LOG_ENV
    from kstrata.search.candidate import content_hash

    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv(CALL_LOG_ENV, str(log))  # as `kstrata bench --executor ray` gets it
    task = resolve_task("relu")
    files = {"correct": CORPUS / "good" / "relu_torch.py",
             "incorrect": CORPUS / "bad" / "relu_all_zero.py",
             "rejected": CORPUS / "bad" / "relu_patched_timer.py"}
    secret = "ray-secret"

    def verdicts(executor):
        return {name: verify_candidate(task, "pytorch", {"source": path.read_text()}, secret=secret,
                                       pool=Caller(executor), scope="small", timeout_s=120)
                for name, path in files.items()}

    with LocalExecutor(size=1) as local:
        here = verdicts(local)
    with make_executor("ray") as remote:
        there = verdicts(remote)
    for name in files:
        assert here[name].verdict.value == name, (name, here[name].check, here[name].evidence)
        assert (there[name].verdict, there[name].check) == (here[name].verdict, here[name].check)
        assert there[name].hidden_tests == here[name].hidden_tests
    # the call log: one line per verification, keyed as the run store keys candidates
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert secret not in log.read_text()
    by_hash = {rec["candidate"]: rec for rec in lines}
    assert len(lines) == len(files)
    for name, path in files.items():
        rec = by_hash[content_hash({"source": path.read_text()}, "pytorch", task.digest)]
        assert (rec["task"], rec["backend"], rec["scope"], rec["kind"]) == ("relu", "pytorch", "small", "ok")
        assert (rec["verdict"], rec["check"]) == (there[name].verdict.value, there[name].check)
        assert rec["ray_pid"] > 0 and rec["hostname"] and rec["finished"] >= rec["submitted"]


def test_evaluate_many_through_ray(ray_local):
    from kstrata.backends.registry import get_backend
    from kstrata.search.evaluators import VerifyMeasureEvaluator

    task, backend = resolve_task("relu"), get_backend("pytorch")
    batch = [{"source": (CORPUS / name).read_text()}
             for name in ("good/relu_torch.py", "bad/relu_all_zero.py", "good/relu_clamp.py")]
    with make_executor("ray", backend=backend) as ex:
        # timed (and its timed shape verified) at a small shape, not relu's nominal 4096 x 4096
        # retimes=0: a doubtful timing (any, of relu at this size on a busy machine) is not timed again
        ev = VerifyMeasureEvaluator(secret="s", executor=ex, confirm_scope=None, shape={"B": 64, "D": 512},
                                    retimes=0)
        out = ev.evaluate_many(task, backend, batch)
    assert [e.verdict.value for e, _ in out] == ["correct", "incorrect", "correct"]
    assert out[1][1] is None
    for _, m in (out[0], out[2]):
        assert m["median_ms"] > 0 and "eager" in m["speedups"]


def test_killed_ray_worker_is_retried(ray_local, tmp_path):
    (tmp_path / "ray_killer.py").write_text(KILLER)
    marker = tmp_path / "killed"
    log = tmp_path / "calls.jsonl"
    with RayExecutor(max_retries=2, env={"PYTHONPATH": f"{SRC}:{tmp_path}"}, call_log=log) as ex:
        futures = [ex.submit("ray_killer:double", i, marker=str(marker) if i == 1 else None,
                             timeout_s=60) for i in range(4)]
        results = [f.result(timeout=120) for f in futures]
    assert marker.exists()  # the first attempt of call 1 killed its Ray worker
    assert [r.kind for r in results] == ["ok"] * 4
    assert [r.value for r in results] == [0, 2, 4, 6]
    # the retried call's answer came from another Ray worker than the killed one
    killed = int(marker.read_text())
    assert results[1].ray_pid > 0 and results[1].ray_pid != killed
    lines = log.read_text().splitlines()
    assert len(lines) == 4 and all('"kind": "ok"' in line for line in lines)


def test_ray_worker_lost_for_good_is_a_crash_result(ray_local, tmp_path):
    (tmp_path / "ray_killer.py").write_text(KILLER)
    with RayExecutor(max_retries=0, env={"PYTHONPATH": f"{SRC}:{tmp_path}"}) as ex:
        r = ex.call("ray_killer:double", 1, marker=str(tmp_path / "once"), timeout_s=60)
    assert not r.ok and r.kind == "crash" and "Ray worker or node lost" in r.error


class _SameEdit:
    """Proposes one equivalent edit of the parent (a correct child)."""

    name = "same-edit"

    def propose(self, task, candidate, feedback, level, *, context):
        from kstrata.agents.base import Proposal, ProposalBatch

        src = candidate.sources["source"] + (
            f"\n\nclass ModelNew(ModelNew):\n    def forward(self, *args):  # edit {context.step}\n"
            "        return super().forward(*args)\n")
        return ProposalBatch([Proposal.edit(candidate.sources, level, src, role="test",
                                            rationale="equivalent edit")])


def _evaluator_without_confirmations(spec, backend, secret, pool, shape=None):
    """The bench's own evaluator (:func:`kstrata.bench.harness.default_evaluator`,
    on the cell's executor) without the full-scope confirmation of each would-be
    best, the re-timing of a doubtful timing and most of the timing budget:
    where the cells run is tested here, not what the timings read."""
    from dataclasses import replace

    from kstrata.bench.harness import default_evaluator
    from kstrata.measure.timing import TimingConfig

    return replace(default_evaluator(spec, backend, secret, pool, shape=shape), confirm_scope=None, retimes=0,
                   timing_config=TimingConfig(budget_ms=50, max_remeasure=0))


@pytest.mark.slow  # two optimize runs through Ray, of one evaluation each: where cells run is tested, not the search
@pytest.mark.heavy
def test_bench_cells_spread_over_ray(ray_local, tmp_path):
    import json

    from kstrata.bench.harness import BenchSpec, run_bench

    # timed at a small shape (the nominal 4096 x 4096 took minutes per cell on a busy 2-core machine)
    spec = BenchSpec(suite="level1", backends=("pytorch",), proposers=("same-edit",),
                     budget={"evaluations": 1}, tasks=("relu", "sigmoid"), timing_shape="B=64,D=512")
    res = run_bench(spec, tmp_path / "bench", proposers={"same-edit": _SameEdit},
                    evaluator_factory=_evaluator_without_confirmations, executor="ray")
    cells = {c["task"]: c for c in res.cells}
    assert {c["status"] for c in cells.values()} == {"done"}, [c["error"] for c in cells.values()]
    assert json.loads((tmp_path / "bench" / "bench.json").read_text())["executor"] == "ray"
    # two cells on two CPUs: they overlapped
    a, b = cells["relu"], cells["sigmoid"]
    assert max(a["started"], b["started"]) < min(a["finished"], b["finished"])
    from kstrata.store.run_store import RunStore

    with RunStore.open(tmp_path / "bench" / a["run_dir"]) as store:
        assert store.spent()["evaluations"] == 1
    assert ray.is_initialized()


def test_worker_threads_follow_the_cpus_of_the_call(ray_local):
    from kstrata.execute.ray_executor import device_cpus

    # Ray sets OMP_NUM_THREADS=1 in a one-CPU task; the kstrata worker gets the task's CPUs
    with RayExecutor(resources={"os:getenv": {"num_cpus": 2}}) as ex:
        two = [ex.call("os:getenv", var, timeout_s=60).value
               for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TVM_NUM_THREADS")]
        one = ex.call("os:getcwd", timeout_s=60)  # another target: one CPU
        assert one.ok
    assert two == ["2", "2", "2"]
    assert [device_cpus(32, 2, 1), device_cpus(128, 8, 1), device_cpus(32, 2, 2), device_cpus(2, 0, 0),
            device_cpus(4, 8, 1)] == [15, 15, 31, 1, 1]


def test_gpu_calls_on_a_cluster_without_gpus(ray_local):
    with pytest.raises(ExecutorSpecError, match="need 1 GPU"):
        make_executor("ray", num_gpus_per_task=1)
    assert ray.is_initialized()
