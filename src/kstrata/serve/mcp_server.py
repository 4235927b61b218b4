"""kstrata as a Model Context Protocol server (official ``mcp`` SDK, MCPServer).

An external coding agent uses kstrata as its task contract and evaluator:

==================  ===========================================================
list_tasks          suite (or ``--tasks DIR``) tasks: name, level, category, dtype
show_task           the public contract: reference source, public shapes, dtype,
                    tolerance, FLOPs and bytes (hidden shapes never shown)
evaluate_candidate  verdict (hidden tests decide it), located feedback (public
                    tests only), timing against eager PyTorch, roofline
profile_candidate   the same plus the full timing record and roofline ceilings
submit_candidate    evaluate and add to the run's candidate tree under ``parent``
get_best            best correct candidate of a task, its sources and lineage
budget_left         limits, spent and left (calls, evaluations, wall seconds)
==================  ===========================================================

Every call is written to the run store as a proposer call (provider ``mcp``,
the tool name as model, the arguments as prompt, a result summary as
response, latency, error) and charged to the ledger as one
``proposer_calls``; evaluations are charged as ``evaluations``. A call beyond
a budget, and bad input, return a tool error with one message (``is_error``),
never a crash. Store access runs on one thread (SQLite connections are
per-thread); verification runs in killable worker processes.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from kstrata import __version__
from kstrata.store.secret import run_secret
from kstrata.execute import WorkerPool
from kstrata.serve.public import public_task, task_summary
from kstrata.serve.service import (
    ServeError,
    candidate_sources,
    evaluate,
    load_backend,
    load_task,
    name_argument,
)
from kstrata.store import RunStore
from kstrata.store.records import CandidateRecord, dumps, jsonable
from kstrata.tasks.errors import TaskError
from kstrata.tasks.loader import load_dir_lenient, suite

PROVIDER = "mcp"


@dataclass(frozen=True)
class Limits:
    """Hard limits of a server session (None: unlimited).

    Attributes
    ----------
    calls:
        Tool calls (``budget_left`` is free), ledger kind ``proposer_calls``.
    evaluations:
        Candidates verified (evaluate, profile, submit), ledger ``evaluations``.
    wall_s:
        Seconds spent evaluating, ledger ``wall_s``.
    """

    calls: int | None = None
    evaluations: int | None = None
    wall_s: float | None = None

    def merged(self, config: dict[str, Any]) -> "Limits":
        """These limits, with gaps filled from a run config's ``budget`` table
        (keys ``proposer_calls``, ``evaluations``, ``wall_s``)."""
        b = config.get("budget") or {}
        return Limits(
            calls=self.calls if self.calls is not None else b.get("proposer_calls"),
            evaluations=self.evaluations if self.evaluations is not None else b.get("evaluations"),
            wall_s=self.wall_s if self.wall_s is not None else b.get("wall_s"),
        )


class KernelServer:
    """The state behind the tools: run store, worker pool, secret, limits.

    Parameters
    ----------
    run_dir:
        Run directory; opened if it holds a run, created otherwise.
    backend:
        Default backend of the tools.
    task_dir:
        A directory of task files to serve instead of the suite.
    limits:
        Budgets; gaps are filled from the run's config.
    workers:
        Worker processes for verification and timing.
    time_candidates:
        Time correct candidates in ``evaluate_candidate``/``submit_candidate``.
    timing:
        A :class:`kstrata.measure.timing.TimingConfig` (the timer's defaults if None).
    timing_shape:
        The ``--timing-shape`` value candidates are timed at (``auto``: fitted
        on a CPU backend, nominal on a GPU, as ``kstrata eval``/``optimize``).

    Not thread-safe: :func:`build_server` calls it from one thread.
    """

    def __init__(self, run_dir: str | Path, *, backend: str = "pytorch",
                 task_dir: str | Path | None = None, limits: Limits = Limits(),
                 workers: int = 1, time_candidates: bool = True, preset: str = "strict",
                 timing: Any = None, timing_shape: str = "auto"):
        self.run_dir = Path(run_dir)
        self.default_backend = backend
        default = load_backend(backend)  # fail at start on a bad backend
        self.task_dir = Path(task_dir) if task_dir else None
        config = {"serve": {"backend": backend, "task_dir": str(task_dir or ""),
                            "limits": jsonable(limits), "preset": preset}}
        from contextlib import ExitStack

        from kstrata.store.lock import run_lock

        if not RunStore.exists(self.run_dir):
            RunStore.check_new(self.run_dir)  # never among a user's own files, nor a lock file left there
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._lock = ExitStack()  # one writer per run folder (kstrata.store.lock), held until close()
        self._lock.enter_context(run_lock(self.run_dir, "kstrata mcp"))
        try:
            self.store = (RunStore.open(self.run_dir) if RunStore.exists(self.run_dir)
                          else RunStore.create(self.run_dir, config))
        except BaseException:
            self._lock.close()
            raise
        self.limits = limits.merged(self.store.config)
        self.secret = run_secret(self.run_dir)
        self.preset = preset
        self.time_candidates = time_candidates
        self.timing = timing
        self.timing_shape = timing_shape
        self.pool = WorkerPool(size=max(1, workers),
                               env=dict(getattr(default, "worker_env", {}) or {}))

    def close(self) -> None:
        self.pool.close()
        self.store.close()
        self._lock.close()

    # -- budget and recording ------------------------------------------------
    def budget(self) -> dict[str, Any]:
        spent = self.store.spent()
        used = {"calls": spent.get("proposer_calls", 0.0), "evaluations": spent.get("evaluations", 0.0),
                "wall_s": spent.get("wall_s", 0.0)}
        limits = jsonable(self.limits)
        left = {k: None if limits[k] is None else max(0.0, limits[k] - used[k]) for k in used}
        return {"limits": limits, "spent": used, "left": left}

    def check_budget(self, tool: str, evaluates: bool) -> None:
        b = self.budget()
        kinds = ["calls"] + (["evaluations", "wall_s"] if evaluates else [])
        for k in kinds:
            if b["left"][k] is not None and b["left"][k] <= 0:
                raise ServeError(
                    f"budget exhausted: {k} limit {b['limits'][k]} reached "
                    f"({b['spent'][k]:g} spent); {tool} refused. budget_left shows what remains"
                )

    def record(self, tool: str, args: dict[str, Any], response: Any, error: str | None,
               latency_s: float, charge: bool = True) -> None:
        """Write one tool call to ``proposer_calls`` and charge it to the ledger."""
        with self.store.transaction() as c:
            c.execute(
                "INSERT INTO proposer_calls (expansion_id, provider, model, prompt, response,"
                " tokens_in, tokens_out, cost_usd, latency_s, error, created)"
                " VALUES (NULL,?,?,?,?,0,0,0,?,?,?)",
                (PROVIDER, tool, dumps(_clipped(args)), dumps(response), latency_s, error, time.time()),
            )
            if charge:
                self.store.charge("proposer_calls", 1, f"mcp:{tool}")

    # -- tools -----------------------------------------------------------------
    def _tasks(self) -> list[Any]:
        """The suite, or the tasks of ``--tasks DIR`` by the rule of ``tasks list --path``
        (:func:`~kstrata.tasks.loader.load_dir_lenient`): a file that is no task by
        its text is left out and never imported (newcomer nc21: helper scripts were
        listed as tasks and run by show_task)."""
        return load_dir_lenient(self.task_dir, check_import=False)[0] if self.task_dir else suite()

    def _task(self, name: str) -> Any:
        """A task by name only (a suite task, or one in the operator's ``--tasks``
        directory). A path from the agent is refused before anything is read:
        ``show_task(task="RUN/candidates/<hash>/graph.py")`` imported a graph
        the agent had just submitted, in this process, with its keys and the
        run's secret (red-team round of 2026-12-03).

        Raises
        ------
        ServeError
            For a path, or a name that is not one of :meth:`_tasks`.
        """
        name_argument(name, "task", "relu")
        if not name or not name.strip():
            raise ServeError("task is empty; give a task name from list_tasks")
        name = name.strip()
        if "/" in name or "\\" in name or name.endswith(".py") or name.startswith("."):
            raise ServeError(f"task {name[:200]!r} is a path; the MCP tools take task names from list_tasks "
                             "(the operator chooses task files with `kstrata mcp --tasks DIR`)")
        names = {t.name for t in self._tasks()}
        if name not in names:
            import difflib

            close = difflib.get_close_matches(name, sorted(names), n=3)
            raise ServeError(f"unknown task {name[:200]!r}" + (f"; did you mean {', '.join(close)}?" if close
                                                              else "; see list_tasks"))
        return load_task(name, self.task_dir)

    def list_tasks(self, level: int | None = None, category: str | None = None) -> dict[str, Any]:
        tasks = [task_summary(t) for t in self._tasks()
                 if (level is None or t.level == level) and (category is None or t.category == category)]
        return {"tasks": tasks, "count": len(tasks)}

    def show_task(self, task: str, backend: str | None = None) -> dict[str, Any]:
        b = load_backend(backend or self.default_backend)
        from kstrata.tasks.scaling import timing_shape_for

        t = self._task(task)
        timed = timing_shape_for(self.timing_shape, t, getattr(b, "device", "cpu"))  # as the tools time
        return public_task(t, b.levels, timed_shape=timed) | {"backend": b.name}

    def _inputs(self, task: str, source: Any, backend: str | None,
                level: str | None) -> tuple[Any, Any, dict[str, str]]:
        t = self._task(task)
        b = load_backend(backend or self.default_backend)
        return t, b, candidate_sources(b, source, level)

    def evaluate_candidate(self, task: str, source: Any, backend: str | None = None,
                           level: str | None = None, time_it: bool | None = None) -> dict[str, Any]:
        t, b, sources = self._inputs(task, source, backend, level)
        out = evaluate(t, b, sources, secret=self.secret, pool=self.pool, preset=self.preset,
                       time_it=self.time_candidates if time_it is None else time_it,
                       timing=self.timing, timing_shape=self.timing_shape)
        self.store.charge("evaluations", 1, "mcp:evaluate")
        self.store.charge("wall_s", out.wall_s, "mcp:evaluate")
        return out.public | {"task": t.name, "backend": b.name}

    def profile_candidate(self, task: str, source: Any, backend: str | None = None,
                          level: str | None = None) -> dict[str, Any]:
        t, b, sources = self._inputs(task, source, backend, level)
        out = evaluate(t, b, sources, secret=self.secret, pool=self.pool, preset=self.preset,
                       time_it=True, timing=self.timing, timing_shape=self.timing_shape)
        self.store.charge("evaluations", 1, "mcp:profile")
        self.store.charge("wall_s", out.wall_s, "mcp:profile")
        result = out.public | {"task": t.name, "backend": b.name}
        m = out.measurement
        if m is not None:
            from kstrata.serve.public import redact_hidden

            result["profile"] = redact_hidden(
                {"roofline": getattr(m, "roofline", None), "candidate": getattr(m, "candidate", None),
                 "baseline": getattr(m, "baseline", None), "settings": getattr(m, "settings", None),
                 "reps": getattr(m, "reps", None), "attempts": getattr(m, "attempts", None)},
                t, self.secret)
        elif result.get("verdict") != "correct":
            result["profile"] = {"available": False, "reason": "only correct candidates are profiled"}
        return result

    def submit_candidate(self, task: str, source: Any, backend: str | None = None,
                         parent: str | None = None, level: str | None = None,
                         rationale: str = "") -> dict[str, Any]:
        from kstrata.search.candidate import content_hash, to_evaluation_record
        from kstrata.surrogates import without_lone_surrogates

        t = self._task(task)
        b = load_backend(backend or self.default_backend)
        parents: tuple[str, ...] = ()
        base = None
        name_argument(parent, "parent", "3fa2c1")
        if parent:
            try:
                full = self.store.resolve(parent)
            except Exception as e:  # noqa: BLE001 - StoreError: unknown/ambiguous prefix
                raise ServeError(str(e)) from None
            parents, base = (full,), self.store.sources(full)
        sources = candidate_sources(b, source, level, base)
        digest = content_hash(sources, b.name, t.digest)
        if self.store.has_candidate(digest):
            rec = next(c for c in self.store.candidates() if c.hash == digest)
            return {"candidate": digest, "duplicate": True, "task": t.name,
                    "verdict": rec.evaluation.verdict if rec.evaluation else None,
                    "note": "this exact source was already submitted; not evaluated again"}
        task_id = self.store.ensure_task(t)
        if level is None and isinstance(source, str):
            level = b.levels[0] if len(b.levels) == 1 else "source"
        cand = CandidateRecord(
            hash=digest, sources=sources, level=level, role="external", proposer=PROVIDER,
            parents=parents, rationale=_clipped(without_lone_surrogates(str(rationale or ""))), backend=b.name,
            metadata={"task": t.name},
        )
        self.store.add_candidate(cand, task_id)
        out = evaluate(t, b, sources, secret=self.secret, pool=self.pool, preset=self.preset,
                       time_it=self.time_candidates, timing=self.timing, timing_shape=self.timing_shape)
        from kstrata.search.candidate import to_measurement_record
        from kstrata.search.evaluators import one_timing

        record = to_evaluation_record(out.evaluation)
        record.wall_s = out.wall_s
        timing = out.public.get("timing") or {}
        failed = str(timing.get("reason", "")).startswith("timing failed")
        if out.verdict == "correct" and out.measurement is None and failed:
            # kstrata show/tree say the timing failed and why, not "not timed" (newcomer nc21)
            record.evidence = {**(record.evidence or {}), "not_timed": str(timing["reason"])}
        meas = None
        if out.measurement is not None:
            # stored as optimize stores one timing: named baseline, a doubtful timing unranked (nc23)
            meas = to_measurement_record(one_timing(out.measurement))
        # one evaluation and its wall seconds charged (budget_left counts submissions like evaluate)
        self.store.record_evaluation(digest, record, meas, wall_s=out.wall_s)
        return out.public | {"candidate": digest, "parent": parents[0] if parents else None,
                             "task": t.name, "backend": b.name, "duplicate": False}

    def get_best(self, task: str) -> dict[str, Any]:
        from kstrata.search.tree import untrusted_findings

        t = self._task(task)
        cands = [c for c in self.store.candidates(with_sources=True)
                 if c.metadata.get("task") == t.name]
        correct = [c for c in cands if c.evaluation and c.evaluation.verdict == "correct"]
        if not correct:
            return {"task": t.name, "best": None, "lineage": [], "candidates": len(cands),
                    "note": "no correct candidate submitted for this task yet"}

        def ranked(c: CandidateRecord) -> bool:  # an untrusted timing (contended, noisy) ranks nothing (nc23)
            return bool(c.measurement and c.measurement.speedup and not untrusted_findings(c.measurement.findings))

        def key(c: CandidateRecord) -> tuple[float, int]:
            return (c.measurement.speedup if ranked(c) else 0.0, -c.seq)

        best = max(correct, key=key)
        by_hash = {c.hash: c for c in cands}
        lineage, node = [], best
        while node is not None:
            lineage.append({
                "candidate": node.hash, "seq": node.seq, "depth": node.depth,
                "level": node.level, "proposer": node.proposer, "rationale": node.rationale,
                "verdict": node.evaluation.verdict if node.evaluation else None,
                "speedup": node.measurement.speedup if node.measurement else None,
                "timing_trusted": ranked(node) if node.measurement and node.measurement.speedup else None,
            })
            node = by_hash.get(node.parents[0]) if node.parents else None
        return {"task": t.name, "best": lineage[0] | {"sources": best.sources},
                "lineage": lineage, "candidates": len(cands)}

    def budget_left(self) -> dict[str, Any]:
        return self.budget()


#: Characters of one text argument (a source, a rationale) kept in a tool call's record
RECORDED_CHARS = 4096


def _clipped(value: Any) -> Any:
    """``value`` (a tool call's arguments) with each text longer than
    :data:`RECORDED_CHARS` cut there and its length noted. Every call's
    arguments were stored whole in ``proposer_calls``, refused calls too: a
    client sending a 100 MB source or rationale a call filled the run's disk
    (red team rt65); a submitted source is stored whole with its candidate."""
    if isinstance(value, str) and len(value) > RECORDED_CHARS:
        return value[:RECORDED_CHARS] + f"... [{len(value)} characters in all]"
    if isinstance(value, dict):
        return {k: _clipped(v) for k, v in list(value.items())[:64]}
    if isinstance(value, (list, tuple)):
        return [_clipped(v) for v in value[:64]]
    return value


#: tool name -> (method, evaluates a candidate, free of the calls budget)
TOOLS: dict[str, tuple[str, bool, bool]] = {
    "list_tasks": ("list_tasks", False, False),
    "show_task": ("show_task", False, False),
    "evaluate_candidate": ("evaluate_candidate", True, False),
    "profile_candidate": ("profile_candidate", True, False),
    "submit_candidate": ("submit_candidate", True, False),
    "get_best": ("get_best", False, False),
    "budget_left": ("budget_left", False, True),
}


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    """What a proposer-call row keeps of a result: small fields only."""
    keep = ("verdict", "check", "candidate", "count", "task", "duplicate", "left")
    out = {k: result[k] for k in keep if k in result}
    if isinstance(result.get("timing"), dict):
        out["speedup"] = result["timing"].get("speedup")
    return out


def unknown_tool_message(name: str) -> str:
    """What a call of a tool name kstrata does not have is told: the name, the
    closest tool names, and every tool name (newcomer nc22: ``Unknown tool:
    evaluate`` named none)."""
    import difflib

    close = difflib.get_close_matches(name, list(TOOLS), n=3, cutoff=0.4) or \
        [t for t in TOOLS if name and name.lower() in t]
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return f"unknown tool {name!r}.{hint} The tools: {', '.join(TOOLS)} (tools/list describes each)."


class _KstrataMCP(MCPServer):
    """:class:`MCPServer` whose unknown-tool error names the tools."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if name not in TOOLS:
            raise ToolError(unknown_tool_message(name))
        return await super().call_tool(name, arguments, context)


def build_server(**kwargs: Any) -> MCPServer:
    """An :class:`MCPServer` over a :class:`KernelServer` (``kwargs`` are its
    arguments), created and always called on one dedicated thread.

    Raises
    ------
    ServeError
        For a bad backend; :class:`kstrata.store.StoreError` for a bad run dir.
    """
    server: MCPServer = _KstrataMCP(
        name="kstrata", version=__version__,
        instructions=(
            "kstrata evaluates kernel candidates with a verifier that hidden tests and "
            "integrity checks back. Start with list_tasks and show_task; evaluate_candidate "
            "gives a verdict, located feedback and timing; submit_candidate adds a candidate "
            "to the run's tree (give parent to continue a lineage); get_best returns the best."
        ),
    )
    thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kstrata-mcp")
    try:
        state = thread.submit(KernelServer, **kwargs).result()
    except BaseException:
        thread.shutdown()
        raise

    def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        method, evaluates, free = TOOLS[tool]
        start = time.perf_counter()
        try:
            if not free:
                state.check_budget(tool, evaluates)
            result = getattr(state, method)(**args)
        except ServeError as e:
            state.record(tool, args, None, str(e), time.perf_counter() - start, charge=not free)
            raise ToolError(str(e)) from None
        except TaskError as e:  # the task file's fault (e.g. its reference fails at a verified shape), not kstrata's
            msg = f"the task cannot be used: {e}"
            state.record(tool, args, None, msg, time.perf_counter() - start, charge=not free)
            raise ToolError(msg) from None
        except Exception as e:  # noqa: BLE001 - recorded, then surfaced as a tool error
            msg = f"internal error in {tool}: {type(e).__name__}: {e}"
            state.record(tool, args, None, msg, time.perf_counter() - start, charge=not free)
            raise ToolError(msg) from None
        state.record(tool, args, _summary(result), None, time.perf_counter() - start, charge=not free)
        return jsonable(result)

    async def run(tool: str, **args: Any) -> dict[str, Any]:
        args = {k: v for k, v in args.items() if v is not None}
        return await asyncio.wrap_future(thread.submit(call, tool, args))

    @server.tool(description="List tasks: name, level (1 op, 2 fused, 3 model), category, dtype.")
    async def list_tasks(level: int | None = None, category: str | None = None) -> dict[str, Any]:
        return await run("list_tasks", level=level, category=category)

    @server.tool(description="A task's public contract: reference source (KernelBench format), "
                 "public and nominal shapes with FLOP/byte counts, dtype, tolerance, levels.")
    async def show_task(task: str, backend: str | None = None) -> dict[str, Any]:
        return await run("show_task", task=task, backend=backend)

    @server.tool(description="Verify a candidate (hidden tests decide the verdict), with located "
                 "feedback from public tests, timing vs eager PyTorch and roofline. `source` is the "
                 "candidate text (e.g. a module defining ModelNew for the pytorch backend).")
    async def evaluate_candidate(task: str, source: str, backend: str | None = None,
                                 level: str | None = None) -> dict[str, Any]:
        return await run("evaluate_candidate", task=task, source=source, backend=backend, level=level)

    @server.tool(description="Evaluate and profile a candidate: full timing record, roofline "
                 "ceilings and position (correct candidates only).")
    async def profile_candidate(task: str, source: str, backend: str | None = None,
                                level: str | None = None) -> dict[str, Any]:
        return await run("profile_candidate", task=task, source=source, backend=backend, level=level)

    @server.tool(description="Evaluate a candidate and add it to the run's candidate tree under "
                 "`parent` (a candidate hash or prefix; levels you omit come from the parent).")
    async def submit_candidate(task: str, source: str, backend: str | None = None,
                               parent: str | None = None, level: str | None = None,
                               rationale: str = "") -> dict[str, Any]:
        return await run("submit_candidate", task=task, source=source, backend=backend,
                         parent=parent, level=level, rationale=rationale)

    @server.tool(description="The best correct submitted candidate of a task (by speedup; an untrusted timing, "
                             "e.g. a contended one, ranks below every trusted one), its sources and lineage.")
    async def get_best(task: str) -> dict[str, Any]:
        return await run("get_best", task=task)

    @server.tool(description="Budget limits, spent and left: tool calls, evaluations, wall seconds.")
    async def budget_left() -> dict[str, Any]:
        return await run("budget_left")

    def close() -> None:
        thread.submit(state.close).result()
        thread.shutdown()

    server.kstrata_close = close  # type: ignore[attr-defined]
    return server


def serve(run_dir: str | Path, *, transport: str = "stdio", host: str = "127.0.0.1",
          port: int = 8000, **kwargs: Any) -> None:
    """Start a server on ``transport`` (``"stdio"`` or ``"http"``, streamable HTTP at
    ``http://HOST:PORT/mcp``) until it is stopped."""
    if transport not in ("stdio", "http"):
        raise ServeError(f"unknown transport {transport!r}; use stdio or http")
    if transport == "stdio":  # stdout is the protocol's: a task's or kstrata's print goes to stderr (nc21)
        from kstrata.serve.stdout_guard import stdout_to_stderr

        with stdout_to_stderr():
            server = build_server(run_dir=run_dir, **kwargs)
            try:
                server.run("stdio")
            finally:
                server.kstrata_close()  # type: ignore[attr-defined]
        return
    server = build_server(run_dir=run_dir, **kwargs)
    try:
        server.run("streamable-http", host=host, port=port)
    finally:
        server.kstrata_close()  # type: ignore[attr-defined]
