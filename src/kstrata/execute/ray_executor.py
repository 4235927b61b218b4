"""The Ray executor: worker calls placed, retried and fault-handled by Ray.

Each call is one Ray task that runs the call in a kstrata
:class:`~kstrata.execute.pool.WorkerPool` inside the Ray worker process, so the
hard timeout, memory limit, crash isolation and the returned
:class:`~kstrata.execute.pool.CallResult` are exactly those of the local pool.
Ray adds what a single host cannot:

- placement: calls that run a candidate on the device (verification, timing,
  baselines; :data:`DEVICE_TARGETS`) ask for ``num_gpus_per_task`` GPUs, so
  with 1 there is one candidate per GPU at a time on any node of the cluster;
  every other call is a one-CPU task (compilation, tuning);
- CPUs: a device call also reserves its GPU's share of the CPUs
  (:func:`device_cpus`), and the kstrata worker's thread pools
  (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``TVM_NUM_THREADS``) get as many
  threads as Ray gave the call: Ray sets ``OMP_NUM_THREADS`` to a task's CPUs,
  which made every judge's PyTorch work (inputs, float64 oracle, timed-output
  checks) single-threaded with one CPU per call;
- retries: a call whose Ray worker process or node dies is re-queued by Ray
  (``max_retries``; Ray counts that as a system failure), so losing a worker
  costs only the calls in flight on it. A candidate that crashes *its kstrata
  worker* is data (a ``crash`` CallResult, as locally) and is not retried.

Nothing is scheduled, sent or retried by kstrata itself; the driver only turns
Ray's outcome into a CallResult. The run store stays on the driver: workers
return values, they never write to it.

Where each call ran can be kept: with ``call_log`` (or the environment variable
:data:`CALL_LOG_ENV`, so that ``kstrata bench --executor ray`` keeps one), the
driver appends one JSON line per finished call (:func:`call_record`).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass
from typing import Any

from kstrata.execute.executor import Executor
from kstrata.execute.pool import CallResult, WorkerPool

VERIFY_TARGET = "kstrata.verify.runner:run_protocol"
TIME_TARGET = "kstrata.measure.candidate:time_candidate"

#: Calls that run a candidate (or a baseline) on the backend's device; they get
#: ``num_gpus_per_task`` GPUs. Everything else is a CPU task.
DEVICE_TARGETS = frozenset({VERIFY_TARGET, TIME_TARGET, "kstrata.measure.baselines:run_baselines"})

#: Environment variable naming the call log of a :class:`RayExecutor` made without
#: ``call_log`` (e.g. by ``kstrata bench --executor ray``).
CALL_LOG_ENV = "KSTRATA_RAY_CALL_LOG"


class RayUnavailableError(ValueError):
    """Ray cannot be used as asked (not installed, or no cluster at the address);
    the message says what to do."""


@dataclass
class RayCallResult(CallResult):
    """A :class:`CallResult` with where Ray ran the call.

    Attributes
    ----------
    node_id:
        Ray node ID (hex) of the worker that produced the result ("" if the
        call never produced one, e.g. after every retry died).
    gpu_ids:
        GPU IDs Ray assigned to the task (strings, as in ``CUDA_VISIBLE_DEVICES``).
    hostname:
        Host name of that node.
    ray_pid:
        PID of the Ray worker process that ran the call (0 if none answered);
        ``worker_pid`` is the kstrata worker inside it.
    """

    node_id: str = ""
    gpu_ids: tuple[str, ...] = ()
    hostname: str = ""
    ray_pid: int = 0


@dataclass(frozen=True)
class PoolSpec:
    """How the worker pool inside a Ray worker is made (``WorkerPool`` arguments)."""

    python: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    memory_mb: int | None = None
    isolate_network: bool = True
    max_calls: int | None = None
    start_timeout_s: float = 120.0

    @classmethod
    def from_kwargs(cls, python: str | None = None, env: Mapping[str, str] | None = None,
                    memory_mb: int | None = None, isolate_network: bool = True,
                    max_calls: int | None = None, start_timeout_s: float = 120.0) -> PoolSpec:
        return cls(None if python is None else str(python), tuple(sorted((env or {}).items())),
                   memory_mb, isolate_network, max_calls, start_timeout_s)


# -- the Ray worker side ---------------------------------------------------------
_worker_pool: tuple[tuple, WorkerPool] | None = None
_worker_lock = threading.Lock()

#: The thread-pool sizes a kstrata worker inside a Ray task gets from the CPUs
#: Ray assigned to the task (unless the pool's ``env`` sets them).
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TVM_NUM_THREADS")


def device_cpus(cluster_cpus: float, cluster_gpus: float, gpus_per_task: float) -> int:
    """CPUs a device call reserves: its GPUs' share of the cluster's CPUs, one
    CPU kept back for CPU calls (``int((cpus - 1) * gpus_per_task / gpus)``, at
    least 1; 1 without GPUs). E.g. 15 per GPU on a 32-CPU, 2-GPU host."""
    if not gpus_per_task or not cluster_gpus:
        return 1
    return max(1, int((cluster_cpus - 1) * gpus_per_task // cluster_gpus))


def _pool_in_this_worker(spec: PoolSpec, threads: int = 1) -> WorkerPool:
    """The one kstrata pool of this Ray worker process, made for ``spec``, the
    GPUs Ray gave the current task and ``threads`` (:data:`THREAD_VARS`); a
    pool for other GPUs, threads or another spec is closed first, so no kstrata
    worker keeps a context on a GPU this task does not own."""
    global _worker_pool
    key = (spec, os.environ.get("CUDA_VISIBLE_DEVICES"), threads)
    with _worker_lock:
        if _worker_pool is not None and _worker_pool[0] == key and not _worker_pool[1]._closed:
            return _worker_pool[1]
        if _worker_pool is not None:
            _worker_pool[1].close()
        env = {**{var: str(threads) for var in THREAD_VARS}, **dict(spec.env)}
        pool = WorkerPool(size=1, python=spec.python, env=env, memory_mb=spec.memory_mb,
                          isolate_network=spec.isolate_network, max_calls=spec.max_calls,
                          start_timeout_s=spec.start_timeout_s)
        _worker_pool = (key, pool)
        return pool


def run_in_ray_worker(target: str, args: tuple, kwargs: dict, timeout_s: float | None,
                      spec: PoolSpec) -> RayCallResult:
    """The body of every Ray task: ``target(*args, **kwargs)`` in this worker's pool.

    Raises
    ------
    RuntimeError
        If no kstrata worker can be started here (as ``WorkerPool.call``).
    """
    import socket

    import ray

    ctx = ray.get_runtime_context()
    threads = max(1, int(ctx.get_assigned_resources().get("CPU", 1)))
    r = _pool_in_this_worker(spec, threads).call(target, *args, timeout_s=timeout_s, **kwargs)
    gpus = tuple(str(g) for g in (ctx.get_accelerator_ids().get("GPU") or ()))
    return RayCallResult(**vars(r), node_id=ctx.get_node_id() or "", gpu_ids=gpus,
                         hostname=socket.gethostname(), ray_pid=os.getpid())


# -- the driver side -------------------------------------------------------------
def split_address(address: str) -> tuple[str, int] | None:
    """``"HOST:PORT"`` or ``"ray://HOST:PORT"`` -> ``(HOST, PORT)``; None if malformed."""
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if not sep or not host.strip("[]") or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host.strip("[]"), int(port)


def check_address(address: str | None, timeout_s: float = 5.0) -> None:
    """Fail fast and clearly when nothing listens at a Ray address.

    ``None`` (start a local Ray) and ``"auto"`` (find a running one) are not
    checked here; ``host:port`` and ``ray://host:port`` must accept a TCP
    connection within ``timeout_s`` seconds.

    Raises
    ------
    RayUnavailableError
        For a malformed address or one where nothing answers.
    """
    if address is None or address == "auto":
        return
    import socket

    host_port = split_address(address)
    if host_port is None:
        raise RayUnavailableError(
            f"Ray address {address!r} is not host:port; use the head node's address "
            "(e.g. 10.0.0.5:6379), ray://HOST:10001 for Ray Client, or auto")
    try:
        socket.create_connection(host_port, timeout=timeout_s).close()
    except OSError as e:
        raise RayUnavailableError(
            f"no Ray cluster answers at {address} ({e}); start one there with `ray start --head` "
            "or fix the address") from None


def _resolve(out: Future, result: Any = None, exc: BaseException | None = None) -> None:
    """Set ``out`` once (a close and Ray's callback may race)."""
    try:
        if exc is not None:
            out.set_exception(exc)
        else:
            out.set_result(result)
    except InvalidStateError:
        pass


def _settle(out: Future, ref_future: Future) -> None:
    """Turn a Ray task's outcome into the CallResult (or kstrata exception) of ``out``."""
    import ray.exceptions as rex

    try:
        _resolve(out, ref_future.result())
        return
    except rex.RayTaskError as e:
        # run_in_ray_worker itself raised (a worker could not start): a kstrata
        # failure, raised from the future as the local pool raises it
        _resolve(out, exc=e.as_instanceof_cause() if hasattr(e, "as_instanceof_cause") else e)
        return
    except rex.OutOfMemoryError as e:
        kind, error = "oom", "Ray's memory monitor killed the worker (after every retry)"
        tail = str(e)
    except rex.TaskCancelledError as e:
        kind, error, tail = "crash", "the Ray task was cancelled (executor closed)", str(e)
    except (rex.RayError, ConnectionError) as e:
        kind = "crash"
        error = f"Ray worker or node lost (after every retry): {type(e).__name__}"
        tail = str(e)
    except BaseException as e:  # noqa: BLE001 - never leave a future unset
        _resolve(out, exc=e)
        return
    _resolve(out, RayCallResult(False, None, kind, error, tail[-4000:]))


def call_record(target: str, args: tuple, kwargs: Mapping[str, Any], submitted: float,
                result: CallResult) -> dict[str, Any]:
    """One line of the call log: what ran where, and how it ended.

    Keys: ``target``; ``submitted`` and ``finished`` (Unix seconds, on the
    driver: the span includes waiting for a GPU and Ray's retries); ``wall_s``
    (the call itself, in its last attempt); ``kind`` and ``error`` (first 200
    characters) of the :class:`CallResult`; ``gpu_ids``, ``node_id``,
    ``hostname``, ``ray_pid``, ``worker_pid``. For a verification
    (:data:`VERIFY_TARGET`) or timing (:data:`TIME_TARGET`) also ``task``,
    ``backend``, ``candidate`` (the content hash the run store keys it by,
    :func:`kstrata.search.candidate.content_hash`), ``scope`` or ``baseline``,
    and for a verification that answered, ``verdict`` and ``check``. Never the
    run's secret, the sources or the value.
    """
    rec: dict[str, Any] = {
        "target": target, "submitted": submitted, "finished": time.time(),
        "wall_s": result.wall_s, "kind": result.kind, "error": (result.error or "")[:200],
        "gpu_ids": list(getattr(result, "gpu_ids", ())), "node_id": getattr(result, "node_id", ""),
        "hostname": getattr(result, "hostname", ""), "ray_pid": getattr(result, "ray_pid", 0),
        "worker_pid": result.worker_pid,
    }
    if target in (VERIFY_TARGET, TIME_TARGET) and len(args) >= 3:
        task, backend = (args[0], args[1]) if target == VERIFY_TARGET else (args[1], args[0])
        sources = args[2]
        rec.update(task=getattr(task, "name", str(task)), backend=str(backend))
        try:
            from kstrata.search.candidate import content_hash

            rec["candidate"] = content_hash(sources, str(backend), task.digest)
        except (AttributeError, TypeError, KeyError):
            rec["candidate"] = ""
        if target == VERIFY_TARGET:
            rec["scope"] = args[5] if len(args) > 5 else kwargs.get("scope", "full")
            if result.ok and isinstance(result.value, Mapping):
                rec.update(verdict=result.value.get("verdict"), check=result.value.get("check"))
        else:
            rec["baseline"] = kwargs.get("baseline", "eager")
    return rec


class RayExecutor(Executor):
    """An :class:`Executor` whose calls are Ray tasks (one host or a cluster).

    Parameters
    ----------
    address:
        ``None``: start a Ray instance on this host (unless this process has
        already connected); ``"auto"``: join the running cluster on this host;
        ``"HOST:PORT"`` or ``"ray://HOST:PORT"``: join that cluster.
    num_cpus, num_gpus:
        Resources of a Ray started here (ignored when joining a cluster).
    num_gpus_per_task:
        GPUs for each call in :data:`DEVICE_TARGETS` (1: one candidate per GPU
        at a time; 0 for CPU backends, where device calls take one CPU). Such a
        call also takes :func:`device_cpus` CPUs, and its kstrata worker as
        many threads.
    max_retries:
        How often Ray re-runs a call whose Ray worker or node died.
    retry_exceptions:
        Passed to Ray: also retry when the task itself raised (here only when
        no kstrata worker could start); False by default.
    resources:
        ``{target: Ray options}`` overriding a target's resources, e.g.
        ``{"kstrata.measure.candidate:time_candidate": {"num_cpus": 8}}`` so CPU
        timings do not share cores.
    runtime_env, init_kwargs:
        Passed to ``ray.init`` (e.g. a ``runtime_env`` that installs kstrata on
        the nodes of a cluster).
    call_log:
        A file to append one JSON line per finished call to
        (:func:`call_record`); default the path in the environment variable
        :data:`CALL_LOG_ENV`, if set, else none.
    **pool_kwargs:
        ``python``, ``env``, ``memory_mb``, ``isolate_network``, ``max_calls``,
        ``start_timeout_s`` of the :class:`WorkerPool` inside each Ray worker
        (the backend's interpreter and environment, as for a local pool). The
        interpreter path must exist on every node.

    Raises
    ------
    RayUnavailableError
        If Ray is not installed, nothing answers at ``address``, or the cluster
        has fewer GPUs than ``num_gpus_per_task``.
    """

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None,
                 num_gpus: int | None = None, num_gpus_per_task: float = 0,
                 max_retries: int = 3, retry_exceptions: bool | list = False,
                 resources: Mapping[str, Mapping[str, Any]] | None = None,
                 runtime_env: dict | None = None, init_kwargs: dict | None = None,
                 call_log: str | os.PathLike | None = None, **pool_kwargs: Any):
        try:
            import ray
        except ImportError:
            raise RayUnavailableError("the Ray executor needs ray: pip install 'ray[default]'") from None
        check_address(address)
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "configure_logging": False, **(init_kwargs or {})}
            if address is None:
                kw.update({k: v for k, v in (("num_cpus", num_cpus), ("num_gpus", num_gpus))
                           if v is not None})
            if runtime_env is not None:
                kw["runtime_env"] = runtime_env
            try:
                ray.init(address=address, **kw)
            except ConnectionError as e:
                raise RayUnavailableError(f"cannot join the Ray cluster at {address}: {e}") from None
        gpus = ray.cluster_resources().get("GPU", 0)
        if num_gpus_per_task and gpus < num_gpus_per_task:
            if self._owns_ray:
                ray.shutdown()
            raise RayUnavailableError(
                f"device calls need {num_gpus_per_task:g} GPU(s) each but the Ray cluster has "
                f"{gpus:g}; use num_gpus_per_task=0 for a CPU backend or add GPU nodes")
        self.address = address
        self.num_gpus_per_task = num_gpus_per_task
        self.device_cpus = device_cpus(ray.cluster_resources().get("CPU", 1), gpus, num_gpus_per_task)
        self.max_retries = max_retries
        self.pool_spec = PoolSpec.from_kwargs(**pool_kwargs)
        self._resources = {k: dict(v) for k, v in (resources or {}).items()}
        self._remote = ray.remote(max_retries=max_retries, retry_exceptions=retry_exceptions)(
            run_in_ray_worker)
        self._inflight: dict[Any, Future] = {}
        self._lock = threading.Lock()
        self._closed = False
        log = call_log if call_log is not None else os.environ.get(CALL_LOG_ENV) or None
        self.call_log = None if log is None else os.fspath(log)

    def options(self, target: str) -> dict[str, Any]:
        """The Ray task options of a call to ``target`` (resources)."""
        if target in self._resources:
            return {"num_cpus": 1, **self._resources[target]}
        if target in DEVICE_TARGETS and self.num_gpus_per_task:
            return {"num_cpus": self.device_cpus, "num_gpus": self.num_gpus_per_task}
        return {"num_cpus": 1, "num_gpus": 0}

    @property
    def capacity(self) -> int:
        """How many device calls the cluster runs at once (GPUs / GPUs per
        task, or CPUs), at least 1."""
        import ray

        total = ray.cluster_resources()
        if self.num_gpus_per_task:
            return max(1, int(total.get("GPU", 0) // self.num_gpus_per_task))
        return max(1, int(total.get("CPU", 1)))

    def submit(self, target: str, *args: Any, timeout_s: float | None = 600.0,
               **kwargs: Any) -> Future[CallResult]:
        """Queue ``target(*args, **kwargs)`` as a Ray task; see :class:`Executor`.

        ``timeout_s`` bounds the call once it runs (time waiting for a GPU is
        not counted). The future's :class:`RayCallResult` says where it ran.

        Raises
        ------
        ValueError
            After :meth:`close`.
        """
        if self._closed:
            raise ValueError("RayExecutor is closed")
        submitted = time.time()
        ref = self._remote.options(**self.options(target)).remote(
            target, args, kwargs, timeout_s, self.pool_spec)
        out: Future = Future()
        out.set_running_or_notify_cancel()
        with self._lock:
            self._inflight[ref] = out

        def done(f: Future, ref: Any = ref) -> None:
            with self._lock:
                self._inflight.pop(ref, None)
            # the call log's line is written before the caller's future resolves, so a caller
            # that reads the log after its results finds every call's line (a race under load)
            staged: Future = Future()
            staged.set_running_or_notify_cancel()
            _settle(staged, f)
            if staged.exception() is not None:
                _resolve(out, exc=staged.exception())
                return
            if self.call_log is not None:
                self._log(call_record(target, args, kwargs, submitted, staged.result()))
            _resolve(out, staged.result())

        ref.future().add_done_callback(done)
        return out

    def _log(self, record: dict[str, Any]) -> None:
        """Append ``record`` to the call log (a failed write loses the line, not the call)."""
        line = json.dumps(record, default=str) + "\n"
        with self._lock:
            try:
                with open(self.call_log, "a", encoding="utf-8") as f:
                    f.write(line)
            except OSError:
                pass

    def call(self, target: str, *args: Any, timeout_s: float | None = 600.0, **kwargs: Any) -> CallResult:
        """Blocking :meth:`submit` (the ``WorkerPool.call`` signature, so a
        RayExecutor can stand wherever a pool is accepted, e.g.
        ``verify_candidate(pool=...)``)."""
        return self.submit(target, *args, timeout_s=timeout_s, **kwargs).result()

    def close(self) -> None:
        """Cancel calls still queued or running, and stop Ray if it was started here."""
        import ray

        if self._closed:
            return
        self._closed = True
        with self._lock:
            inflight = list(self._inflight.items())
        for ref, out in inflight:
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - already finished or lost
                pass
            _resolve(out, RayCallResult(False, None, "crash", "the Ray executor was closed "
                                        "before the call finished"))
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()
