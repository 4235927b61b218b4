"""Terminal views of a run for the CLI: the lineage tree, one candidate, and
the end-of-run table (``kstrata tree``, ``kstrata show``, ``kstrata optimize``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from pathlib import Path

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from kstrata import jsontext
from kstrata.measure.contention import read_note
from kstrata.measure.speedup_words import interval_verdict, speedup_text
from kstrata.search.tree import CONFIRMATION_TIMEOUT, UNTRUSTED_PREFIX, CandidateTree, Node, unevaluated
from kstrata.shellarg import arg
from kstrata.store.run_store import RunStore, StoreError, read_summary


@dataclass(frozen=True)
class Reading:
    """A correct candidate's speedup as every view of a run shows it (the
    tree, ``show``, the end-of-run table, the HTML report): the run's latest
    timing of it, which a re-timing (the end-of-run round or ``kstrata
    retime``) replaces, and which timing that was.

    ``value``, ``low`` and ``high`` are ratios (baseline time / candidate
    time; the interval is 95%, ``None`` where none was measured) against
    ``baseline``, the run's primary one; ``trusted`` is false when the timing
    was not believed (the candidate is unranked); ``retimed`` is true when
    the reading comes from the final, longer timing round rather than the
    search's first timing."""

    value: float
    baseline: str
    low: float | None
    high: float | None
    trusted: bool
    retimed: bool

    @property
    def which(self) -> str:
        """``"re-timed"`` or ``"first timing"``: which timing of the run this is."""
        return "re-timed" if self.retimed else "first timing"

    def text(self, interval: bool = False) -> str:
        """``"2.1x"`` (with ``interval``: ``"2.1x [1.45, 2.74]"`` where one was measured), marked
        ``(a tie: not faster)`` when the interval holds 1 (:func:`kstrata.measure.speedup_words.speedup_text`)."""
        return speedup_text(self.value, self.low, self.high, interval)


#: how the judge's reduced-scope note ends (kstrata.verify.runner); not so for a start given on a backend that
#: times nothing, whose confirmation is left to `kstrata export` (newcomer nc24), so `kstrata show` drops it
OPTIMIZE_CONFIRMS = " (optimize confirms its best at the full scope)"

def reading(node: Node) -> Reading | None:
    """The one speedup reading of ``node`` that the views show
    (:class:`Reading`); ``None`` unless the node is correct and timed.

    A measurement stored by the final round carries ``final_round`` in its
    raw record (:meth:`kstrata.search.evaluators.VerifyMeasureEvaluator.final_round`),
    which marks the reading as re-timed."""
    m = node.measurement if node.correct else None
    if m is None or m.speedup is None:
        return None
    primary = next((s for s in m.speedups if s.value == m.speedup), None)
    raw = m.raw if isinstance(m.raw, dict) else {}
    inner = raw.get("raw") if isinstance(raw.get("raw"), dict) else {}
    return Reading(value=m.speedup, baseline=primary.baseline if primary else "baseline",
                   low=primary.ci_low if primary else None, high=primary.ci_high if primary else None,
                   trusted=node.timing_trusted, retimed=bool(raw.get("final_round") or inner.get("final_round")))


def node_label(tree: CandidateTree, node: Node, finished: bool = False) -> Text:
    """``hash8 level role verdict speedup [router reason]`` for one node of
    ``kstrata tree``, its speedup from :func:`reading` with which timing it
    is; "slower than its parent" compares the two readings shown when both
    are trusted (an untrusted reading, say a busy machine's, ranks nothing
    and says no node is slower), and a node
    that read slower only at its first timing (the search acted on that,
    e.g. a lookahead) says so (``finished``: the run has stopped, so an
    unevaluated node never will be)."""
    colour = {"correct": "green", None: "dim"}.get(node.verdict, "red")
    # the start has no level and no proposer: "initial" once, not "initial initial" (newcomer nc26)
    edited = f"{node.level or 'initial'} {node.role}" if node.level or node.role != "initial" else "initial"
    parts: list[tuple[str, str]] = [(node.hash[:8], "bold"), (f" {edited} ", ""),
                                    (node.verdict or unevaluated(finished), colour)]
    if node.reduced_scope:  # passed the search's small-scope screening only (newcomer nc18)
        parts.append((" (small scope only)", "yellow"))
    r = reading(node)
    if r is None and node.correct and node.timing_failure:
        parts.append((" timing failed (`kstrata show` says why)", "yellow"))
    if r is not None:
        shown = f" {r.text()}" + (" re-timed" if r.retimed else "")
        parts.append((shown, "cyan") if r.trusted else (f"{shown} unranked (untrusted timing)", "yellow"))
    parent = reading(tree[node.parents[0]]) if node.parents else None
    if r is not None and parent is not None and r.trusted and parent.trusted and r.value < parent.value:
        parts.append((" (slower than its parent)", "yellow"))
    elif node.slower_at_creation:  # what the search acted on (a lookahead), not what the readings shown say
        parts.append((" (slower than its parent at their first timings)", "yellow"))
    if len(node.parents) > 1:
        parts.append((f" +{len(node.parents) - 1} parent(s)", "magenta"))
    if node.router_reason:
        parts.append((f" — {node.router_reason}", "italic dim"))
    return Text.assemble(*parts)


def tree_view(tree: CandidateTree, title: str, finished: bool = False) -> RenderableType:
    """``tree`` drawn as ``kstrata tree`` shows it: each node under its first
    parent, labelled by :func:`node_label`, declines under the node."""
    return tree.render(title, finished)


def legend(levels: set[str] | None = None) -> Text:
    """What the words in a tree's node lines mean (printed under ``kstrata
    tree``), for a run whose candidates edit ``levels`` (``None``: any; the
    graph-change lines only where a graph or schedule level is edited)."""
    named = [lv for lv in ("graph", "schedule", "source") if levels is None or lv in levels]
    lines = [
        (f"Each line: hash, level edited ({', '.join(named) or 'none yet'}; initial: the start), who proposed it, "
         "verdict, speedup vs the first baseline, then why this node was expanded."),
        ("  speedup: the run's latest timing of the candidate; re-timed: from the final, longer round (end of "
         "the run or `kstrata retime`), which replaced its first timing."),
        ("  unranked (untrusted timing): correct, but its timing stayed too noisy to rank; `kstrata retime RUN` "
         "re-times it."),
        ("  declined at LEVEL: an agent asked to edit that level of this node made no change; its diagnosis, and "
         "what it asked of another level."),
    ]
    if levels is None or {"graph", "schedule"} & levels:
        lines += [
            "  slower than its parent: kept anyway, since a graph change often pays off only after schedule edits.",
            ("  slower than its parent at their first timings: read slower when the search timed it (and acted on "
             "that), but not in the readings shown."),
            "  lookahead i/n: the i-th of n schedule edits granted to such a slower graph change before it is judged.",
            ("  levels take turns (older runs: round-robin): the built-in policy asks for graph and schedule edits "
             "in turn."),
        ]
    return Text("\n".join(lines), style="dim")


def _levels(*trees: CandidateTree) -> set[str] | None:
    """The levels the candidates of ``trees`` edit; ``None`` (any) when none edits one yet."""
    seen = {n.level for t in trees for n in t if n.level}
    return seen or None


def run_tree(run_dir: str | Path) -> RenderableType:
    """The lineage of the run in ``run_dir`` as a rich tree (hash prefix, level,
    role, verdict, speedup, router reason); for a bench directory, one tree
    per run (task, backend, proposer).

    Raises
    ------
    kstrata.store.StoreError
        If ``run_dir`` is neither a run nor a bench directory.
    """
    if not (Path(run_dir) / "run.db").is_file() and _is_bench(run_dir):
        from kstrata.bench.results import load_results

        views = load_results(run_dir).runs
        return Group(*(tree_view(v.tree, f"{v.task} on {v.backend} · {v.proposer}", v.summary is not None)
                       for v in views), legend(_levels(*(v.tree for v in views)))) if views \
            else Text(f"{run_dir}: a bench with no runs yet")
    with RunStore.open(run_dir) as store:
        tree = CandidateTree.from_store(store, with_sources=False)
        config = store.config
    title = run_title(config, tree)
    return Group(tree_view(tree, title, finished=(Path(run_dir) / "summary.json").is_file()), legend(_levels(tree)))


def run_title(config: dict, tree: CandidateTree) -> str:
    """``TASK on BACKEND`` for ``kstrata tree``'s header: from the run's
    config, else (a ``kstrata mcp`` run, whose submissions may be of several
    tasks and backends) from its candidates, ``(MCP)`` added; ``?`` only
    where nothing is known (newcomer nc21: an MCP run read "? on ?")."""
    task = (config.get("task") or {}).get("name") if isinstance(config.get("task"), dict) else None
    backend = config.get("backend")
    if task and backend:
        return f"{task} on {backend}"
    serve = config.get("serve") if isinstance(config.get("serve"), dict) else {}
    tasks = sorted({str(n.metadata.get("task")) for n in tree if isinstance(n.metadata, dict)
                    and n.metadata.get("task")})
    backends = sorted({n.backend for n in tree if n.backend}) or ([serve["backend"]] if serve.get("backend") else [])
    title = f"{task or ', '.join(tasks) or '?'} on {backend or ', '.join(backends) or '?'}"
    return title + (" (MCP)" if serve else "")


def _is_bench(path: str | Path) -> bool:
    """Whether ``path`` is a bench directory (imports the bench package, and with it torch: asked only of a
    directory that holds no run)."""
    from kstrata.bench.results import is_bench_dir

    return is_bench_dir(Path(path))


def best_note(node: Node, run_dir: str | Path) -> str:
    """What ``kstrata show RUN`` says of the candidate it shows by default,
    the run's best ``node`` (what ``best/`` holds): ranked with its speedup,
    unranked (its timing not trusted: no speedup claimed), or correct but not
    timed; then how to see another."""
    r = reading(node)
    if not node.timing_trusted:
        rank = "none ranked: its timing was not trusted, so no speedup is claimed"
    elif r is None:
        rank = "correct, timing failed (its timing line says why)" if node.timing_failure else "correct, not timed"
    else:
        rank = f"ranked, {r.text()}" + (" re-timed" if r.retimed else "")
    return (f"the run's best, {node.hash[:12]} ({rank}); `kstrata show {arg(run_dir)} CAND` shows another "
            f"(`kstrata tree {arg(run_dir)}` lists them)")


def finding_text(finding: Any) -> str:
    """One timing finding as a line: a string as it is; a profiler finding
    (``{"text", "level", "confidence", "metrics"}``, its text already giving
    the roofline placement) as its text and the level it points at; anything
    else as JSON."""
    if isinstance(finding, str):
        return finding
    if isinstance(finding, dict) and finding.get("text"):
        level = f" [{finding['level']} level]" if finding.get("level") else ""
        return f"{finding['text']}{level}"
    return json.dumps(finding, default=str)


def feedback_lines(feedback: dict[str, Any]) -> list[str]:
    """What :meth:`~kstrata.search.tree.Node.feedback` holds, as text lines:
    one bullet per verifier item (``[kind, level] text``, its text's lines
    indented, never cut) and one per timing finding, then the median time (ms)."""
    lines: list[str] = []
    for item in feedback.get("evaluation") or []:
        if not isinstance(item, dict):
            lines.append(f"- {item}")
            continue
        tag = ", ".join(str(item[k]) for k in ("kind", "level") if item.get(k))
        text = str(item.get("text") or item.get("message") or "").rstrip().splitlines() or [""]
        lines.append(f"- [{tag}] {text[0]}" if tag else f"- {text[0]}")
        lines += [f"  {t}" for t in text[1:]]
    m = feedback.get("measurement") or {}
    for f in m.get("findings") or []:
        lines.append(f"- timing: {finding_text(f)}")
    if m.get("median_ms") is not None:
        lines.append(f"- median time: {m['median_ms']:.4g} ms")
    return lines


def shown_candidate(run_dir: str | Path, prefix: str | None = None) -> tuple[CandidateTree, Node, bool]:
    """The candidate ``kstrata show RUN [CAND]`` shows: ``(tree, node, is_best)``;
    without ``prefix``, the run's best (:meth:`CandidateTree.best_correct`,
    what ``best/`` holds, ``is_best`` True).

    Raises
    ------
    kstrata.store.StoreError
        If ``run_dir`` is not a run, ``prefix`` matches no candidate or
        several, or no ``prefix`` is given and no candidate is correct.
    """
    with RunStore.open(run_dir) as store:
        tree = CandidateTree.from_store(store)
        digest = None if prefix is None else store.resolve(prefix)
    if digest is not None:
        return tree, tree[digest], False
    best = tree.best_correct()
    if best is None:
        raise StoreError(f"{run_dir} has no correct candidate, so no best to show; name one: "
                         f"`kstrata show {arg(run_dir)} CAND` (`kstrata tree {arg(run_dir)}` lists them)")
    return tree, best, True


def candidate_view(run_dir: str | Path, prefix: str | None = None, columns: int | None = None) -> RenderableType:
    """One candidate (:func:`shown_candidate`) as text: lineage, verdict,
    speedups, a failed verdict's evidence (the test, the traceback with the
    candidate's own frames, ...) as ``kstrata eval`` prints it
    (:func:`kstrata.cli.eval.evidence_line`, wrapped to ``columns`` characters,
    the terminal's), feedback (:func:`feedback_lines`) and its sources; the
    run's best under a line that says so (``kstrata show --json`` prints
    :func:`kstrata.search.show_json.candidate_json` instead).

    Raises
    ------
    kstrata.store.StoreError
        As :func:`shown_candidate`.
    """
    tree, node, is_best = shown_candidate(run_dir, prefix)
    digest = node.hash
    parts: list[RenderableType] = []
    if is_best:
        parts.append(Text(f"showing {best_note(node, run_dir)}", style="bold"))
    speedups = node.measurement.speedups if node.measurement is not None else ()
    width = max([len("router reason"), *(len(f"speedup vs {s.baseline}") for s in speedups)])
    # the full hash on a line of its own that is never wrapped (print the view with crop=False), aligned
    # with the rows below; a grid cell would fold it at the column's width
    parts.append(Text("hash".ljust(width + 2) + node.hash, no_wrap=True, overflow="ignore"))
    head = Table.grid(padding=(0, 2))
    head.add_column(no_wrap=True, width=width)
    head.add_column(overflow="fold")  # a narrow terminal folds a rationale; it never cuts one

    def row(label: str, value: str) -> None:  # the run store's text as written: never read as rich markup
        head.add_row(label, Text(value))

    row("level / role", f"{node.level} / {node.role} ({node.proposer})" if node.parents or node.level
        else "initial (the run's starting point, not an edit)")
    row("parents", ", ".join(p[:12] for p in node.parents) or "-")
    row("path to root", " ← ".join(n.hash[:8] for n in tree.path_to_root(digest)))
    row("rationale", node.rationale or "-")
    row("router reason", node.router_reason or "-")
    row("verdict", f"{node.verdict or unevaluated((Path(run_dir) / 'summary.json').is_file())}"
                 + (f" ({node.evaluation.check})" if node.evaluation and node.evaluation.check else ""))
    if node.reduced_scope:
        # the judge's note ends "(optimize confirms its best at the full scope)", which a run that left that to
        # export (the given start on triton-interp) contradicted on the same line (newcomer nc24)
        scope = node.reduced_scope.removeprefix("small: ").replace(OPTIMIZE_CONFIRMS, "")
        row("verified", f"at a reduced scope only, not known to be correct beyond it: "
                        f"{scope}; `kstrata export` verifies it at the full scope before it exports it")
        timed_out = (node.evaluation.evidence or {}).get(CONFIRMATION_TIMEOUT) if node.evaluation else None
        if isinstance(timed_out, dict) and timed_out.get("check") == "evaluator_exception":
            row("full scope", f"its verification there ({timed_out.get('by')}) could not finish on kstrata's side "
                              f"({str(timed_out.get('message') or '')[:200]}): not a wrong answer; `kstrata export "
                              f"{arg(run_dir)} --to DIR` tries again")
        elif isinstance(timed_out, dict):
            row("full scope", f"its verification there ({timed_out.get('by')}) timed out: a time limit, not a "
                              f"wrong answer; `kstrata export {arg(run_dir)} --to DIR --timeout N` tries again "
                              "with more time")
    message = verdict_message(node)
    if message:
        row("message", message)
    r = reading(node)
    if node.correct and node.measurement is None and node.timing_failure:
        row("timing", node.timing_failure)
    if node.measurement is not None:
        which = "" if r is None else f" ({r.which}" + ("" if r.trusted else "; timing not trusted: unranked") + ")"
        for s in node.measurement.speedups:
            row(f"speedup vs {s.baseline}", f"{speedup_text(s.value, s.ci_low, s.ci_high)}{which}")
        if node.roofline_fraction is not None:
            row("roofline", f"{node.roofline_fraction:.1%} ({node.bound})"
                         + ("" if r is None or r.trusted else "; from an untrusted timing"))
    note = graph_header_note(node.sources.get("graph", ""))
    if note:
        row("graph header", note)
    parts.append(head)
    ev = node.evaluation
    if ev is not None and not node.correct and isinstance(ev.evidence, dict):
        # newcomer nc25: show printed a runtime_error's message only; the traceback and the failing line of the
        # candidate's kernel were stored (show --json had them) and eval printed them
        from kstrata.cli.eval import evidence_line

        lines = [evidence_line(k, v, columns) for k, v in ev.evidence.items() if k not in ("message", "error")]
        if lines:
            parts += [Text("evidence", style="bold"), Text("\n".join(lines))]
    feedback = node.feedback()
    if isinstance(feedback.get("measurement"), dict):  # a finding another one already holds is shown once
        found = feedback["measurement"]["findings"]
        feedback["measurement"]["findings"] = [f for i, f in enumerate(found) if not any(
            j != i and isinstance(f, str) and isinstance(g, str) and f in g and (f != g or j < i)
            for j, g in enumerate(found))]
    if feedback.get("evaluation") or feedback.get("measurement"):
        # the judge words its advice for any run ("kstrata retime RUN"): here the run is known
        lines = "\n".join(feedback_lines(feedback)).replace("kstrata retime RUN", f"kstrata retime {arg(run_dir)}")
        parts += [Text("feedback", style="bold"), Text(lines)]
    for level, text in sorted(node.sources.items()):
        # word_wrap: a line longer than the terminal continues on the next row (no number), never cut
        parts += [Text(f"{level} source", style="bold"), Syntax(text, "python", line_numbers=True, word_wrap=True)]
    return Group(*parts)


#: lines of a failed verdict's message that ``kstrata show`` prints (the rest is counted, never dropped silently)
MESSAGE_LINES = 20


def verdict_message(node: Node, max_lines: int = MESSAGE_LINES) -> str:
    """The verifier's message for ``node``'s failed verdict (its evidence's
    ``message``, else ``error``): the first ``max_lines`` lines and, past
    them, how many were left out and where the whole message is; ``""`` for a
    correct or unevaluated candidate, or when there is none."""
    ev = node.record.evaluation
    if ev is None or node.correct or not isinstance(ev.evidence, dict):
        return ""
    text = str(ev.evidence.get("message") or ev.evidence.get("error") or "").strip()
    lines = text.splitlines()
    if len(lines) <= max_lines:
        return text
    return "\n".join(lines[:max_lines] + [f"... ({len(lines) - max_lines} more lines; the whole message is in "
                                           "the run's run.db, table evaluations, column evidence_json)"])


def shape_text(shape: dict[str, int] | None) -> str:
    """``B=1024, D=1024`` (``?`` for no shape)."""
    return ", ".join(f"{k}={v}" for k, v in shape.items()) if shape else "?"


def unranked_line(unranked: list[dict], run_dir: str | Path) -> str:
    """One line for every correct candidate whose timing was not believed:
    how many, the range of their (untrusted) readings, why
    (:func:`unranked_why`) and what to do."""
    reads = [u["speedup"] for u in unranked if u.get("speedup") is not None]
    span = "" if not reads else (f", read {min(reads):.3g}x" if len(reads) == 1 or min(reads) == max(reads)
                                 else f", read {min(reads):.3g}x to {max(reads):.3g}x")
    n = len(unranked)
    return (f"{n} correct candidate{'s' if n != 1 else ''} not ranked{span}: {unranked_why(unranked)}; "
            f"re-time on a quiet machine with `kstrata retime {arg(run_dir)}`")


def unranked_why(unranked: list[dict]) -> str:
    """Why the correct candidates ``unranked`` (``[{"why": finding, ...}]``,
    as :meth:`CandidateTree.unranked` lists them) were not ranked, said once
    for all of them: other processes on the CPUs (from the judge's
    ``contended:`` note, with the range of busy CPUs and how many timings it
    covers), or a noisy timing; any other reason once each, without the
    advice the finding carries (:func:`timing_reason`), which the caller
    gives once for its context."""
    n = len(unranked)
    whys = [u.get("why") for u in unranked]
    busy = busy_span(whys)
    if busy:  # the judge saw other processes on the CPUs: say so, with how many
        held, cpus, count = busy
        which = "it was" if n == 1 else f"{count} of them were"
        out = [f"other processes kept {held} of the {cpus} CPUs busy while {which} timed"]
        if count < n:
            out.append("the other timings stayed noisy")
        return "; ".join(out)
    reasons = list(dict.fromkeys(timing_reason(w) for w in whys if w))
    plain = [r for r in reasons if not _NOISY.search(r)]
    if not plain:
        return "timing stayed noisy (a busy machine)"
    return "; ".join(plain + (["the other timings stayed noisy"] if len(plain) < len(reasons) else []))


#: A finding that only says the timing was noisy (no other reason in it).
_NOISY = re.compile(r"^(the )?timing stayed noisy", re.I)
#: Clauses of a timing finding that say what to do about it (which command, where):
#: advice that depends on where the finding is shown, so the views give it themselves.
_ADVICE = re.compile(r"kstrata retime|re-times? it|quiet(er)? machine|not ranked as a speedup", re.I)


def no_speedup_note(tree: CandidateTree | None) -> str:
    """What is said of a task or run whose candidates include a correct one
    but no ranked speedup (the report's strips and Tasks row, ``kstrata
    bench``'s table): ``"correct, unranked (timing not trusted): WHY"`` (why
    once, :func:`unranked_why`) when correct candidates of ``tree`` were
    timed but not believed, else ``"correct, not timed (no speedup measured)"``
    (e.g. an interpreter backend); never "not correct"."""
    unranked = tree.unranked() if tree is not None else []
    if unranked:
        return f"correct, unranked (timing not trusted): {unranked_why(unranked)}"
    return "correct, not timed (no speedup measured)"


def best_phrase(summary: dict) -> str:
    """The run's best in a few words, from its ``summary.json``: ``"1.2x"``
    (ranked), ``"none ranked (correct, timing not trusted)"``, ``"correct,
    not timed"`` or ``"none correct"`` (``kstrata bench``'s line per run)."""
    best = summary.get("best")
    if best is None:
        return "none correct"
    if summary.get("timed") is False:
        return "correct, not timed"
    if none_ranked(summary):
        return "none ranked (correct, timing not trusted)"
    if not best.get("speedups"):
        return "correct, not timed"
    s = best["speedups"][0]
    return speedup_text(s["value"], s.get("ci_low"), s.get("ci_high"), interval=False)


def timing_reason(finding: str | None) -> str:
    """What an untrusted-timing finding or a judge's timing note says went
    wrong, without the untrusted-timing prefix and without its advice
    (which command re-times it: ``kstrata retime RUN`` applies to a run,
    not to a plain ``kstrata eval``), e.g. ``contended: other processes
    kept 1.84 of 2 CPUs busy during this timing, which used 2 thread(s);
    candidate and baseline were not timed alike`` ("" for ``None``)."""
    text = (finding or "").removeprefix(UNTRUSTED_PREFIX).strip()
    clauses = re.split(r"(?<=[;.])\s+", text)
    kept = [c for c in clauses if not _ADVICE.search(c)]
    return " ".join(kept).rstrip(" ;.")


def busy_span(whys: list[str | None]) -> tuple[str, int, int] | None:
    """From untrusted-timing findings, those with the judge's ``contended:``
    note (:func:`kstrata.measure.contention.read_note`): how many CPUs other
    processes kept busy (``"1.3"`` or a range ``"1.3-1.4"``), of how many,
    and in how many of the findings; ``None`` when none has the note."""
    seen = [r for w in whys if (r := read_note(w))]
    if not seen:
        return None
    busy = [others for others, _ in seen]
    lo, hi = f"{min(busy):.2g}", f"{max(busy):.2g}"
    held = lo if lo == hi else f"{lo}-{hi}"  # equal at two digits: one number, not "1.6-1.6"
    return held, seen[0][1], len(seen)


def none_ranked(summary: dict) -> bool:
    """Whether a run's ``summary.json`` names a best (a correct candidate) but
    ranks nothing: candidates were timed and no timing was trusted, so no
    speedup is claimed. (A run that timed nothing, e.g. on an interpreter
    backend that checks correctness only, is not this case.)"""
    best = summary.get("best")
    return best is not None and summary.get("timed") is not False and not best.get("speedups")


def next_steps(run_dir: str | Path) -> str:
    """What to do with a finished run, printed under its table by ``kstrata
    optimize`` and ``kstrata retime`` ("" when nothing is correct): where the
    best's sources are and how to export them; or, when nothing was ranked
    (:func:`none_ranked`), that ``best/`` is only a correct fallback, not a
    result, and that ``kstrata retime`` on a quieter machine comes first
    (``kstrata export`` refuses such a best without ``--unranked``)."""
    run_dir = Path(run_dir)
    summary = read_summary(run_dir) or {}
    best = summary.get("best")
    if best is None:
        return ""
    if none_ranked(summary):
        with RunStore.open(run_dir) as store:
            baseline = ((store.config.get("cli") or {}).get("baselines") or ["eager"])[0]
            node = CandidateTree.from_store(store, with_sources=False)[best["hash"]]
        what = "the initial candidate" if not node.parents else f"a {node.level or 'initial'}-level edit"
        return (f"nothing was ranked: no correct candidate's timing could be trusted, so none is known to be "
                f"faster than {baseline}. best/ holds {best['hash'][:12]} ({what}) only as a correct fallback, "
                f"not as a result.\nnext: re-time on a quieter machine first: kstrata retime {arg(run_dir)}\n"
                f"then export what ranks: kstrata export {arg(run_dir)} --to DIR (--unranked exports the fallback "
                "anyway)")
    unverified = " (not verified at the full scope: the export verifies it there first)" \
        if _unconfirmed_best(best, run_dir) else ""
    return (f"best candidate's sources: {run_dir / 'best'}{unverified}\n"
            f"use it from Python: kstrata export {arg(run_dir)} --to DIR (prints how to call it)")


def graph_header_note(graph: str) -> str:
    """What a TVM graph's ``# shape:`` and ``# build:`` header lines mean
    together ("" for text without them): ``shape`` says how the graph text
    was traced, ``build`` how it is compiled, so ``symbolic`` + ``static``
    is no contradiction."""
    import re

    fields = dict(re.findall(r"^#\s*(shape|build):\s*(\S+)", graph, flags=re.M))
    if not fields:
        return ""
    shape = ("written for any shape (sizes are symbols)" if fields.get("shape", "symbolic") == "symbolic"
             else "written for one shape (the trace fixed its sizes)")
    build = ("compiled once for every shape" if fields.get("build", "symbolic") == "symbolic"
             else "compiled separately for each shape it runs at, with constant sizes (faster loops; "
                  "an export of it runs only at the shape it was built for)")
    return f"# shape: {fields.get('shape', 'symbolic')}, # build: {fields.get('build', 'symbolic')}: the graph " \
           f"text is {shape} and {build}"


def _incorrect_start(run_dir: Path) -> str | None:
    """When the run's start (its ``initial`` candidate: the backend's, or ``--initial FILE``)
    was evaluated and not correct: a line saying so, since every candidate of the run
    descends from it (newcomer nc11: a search from a kernel with a tail bug spent its
    budget on its children and ended "none correct" without a word about the start)."""
    if not (run_dir / "run.db").is_file():
        return None
    try:
        with RunStore.open(run_dir) as store:
            tree = CandidateTree.from_store(store, with_sources=False)
    except Exception:  # noqa: BLE001 - a damaged store: the table's other lines still print
        return None
    start = next((n for n in tree if n.record.role == "initial"), None)
    ev = None if start is None else start.record.evaluation
    if ev is None or ev.verdict == "correct":
        return None
    why = f" ({ev.check})" if ev.check else ""
    if ev.verdict == "timeout":  # the time ran out, no result was wrong (queue-model round: an interpreter's
        # full-scope confirmation of a correct start ran out of time on a loaded machine and read "fix it")
        return (f"the start {start.hash[:12]} ran out of time ({ev.verdict}{why}): no result of it was wrong; "
                "the verification did not finish in its time limit (an interpreter's full-scope tests take "
                "minutes, longer on a loaded machine): run it on a quieter machine, or verify it with "
                f"`kstrata eval` and a longer --timeout; `kstrata show {arg(run_dir)} {start.hash[:12]}` has the rest")
    return (f"the start {start.hash[:12]} was {ev.verdict}{why}, and every candidate descends from it: fix it "
            f"(`kstrata show {arg(run_dir)} {start.hash[:12]}` has its feedback) or start from another (--initial FILE)")


def _unconfirmed_best(best: dict | None, run_dir: Path) -> str | None:
    """What the end-of-run table says of a best the full-scope confirmation
    did not reach (``summary["best"]["confirmed"] is False``: it stopped after
    :data:`~kstrata.search.loop.MAX_CONFIRMATIONS` earlier bests failed there)
    or a best verified at a reduced scope only (``"reduced_scope"``: e.g. the
    run was stopped before its end);
    None for a confirmed best or one no confirmation was asked for. Newcomer
    nc22: a best screened at a reduced scope only read "the first correct
    candidate" and was found incorrect by ``kstrata export``."""
    if not best or (best.get("confirmed") is not False and not best.get("reduced_scope")):
        return None
    if best.get("full_scope_timeout"):  # kept as screened: a timeout is no wrong answer (loop.confirm_one)
        why = "its full-scope verification timed out, a time limit, not a wrong answer"
    elif best.get("confirmed") is False:
        why = "the full-scope confirmation did not reach it, stopping after earlier bests failed there"
    else:  # e.g. the start given on a backend that times nothing: left to export (loop._Run.given_start_untimed)
        why = "the search did not verify it there"
    return (f"{best['hash'][:12]} was verified by the search's screening only, not at the full scope ({why}): "
            f"it is not known to be correct; `kstrata export {arg(run_dir)}` verifies it at the full scope first "
            "(on a busy machine give it a longer --timeout)")


def result_table(run_dir: str | Path, nominal: dict[str, int] | None = None) -> Table:
    """End-of-run table: best ranked candidate, its speedup vs each baseline
    with its 95% interval and the shape it was timed at, roofline fraction,
    verdict counts, one line for the unranked candidates, budget spent and
    the stop reason (from ``summary.json``; ``kstrata tree`` names each
    unranked candidate). ``nominal``: the task's nominal shape, to say when
    the timing shape differs from it."""
    run_dir = Path(run_dir)
    summary = read_summary(run_dir) or {}
    table = Table(title=f"run {run_dir}", show_header=False)
    table.add_column(no_wrap=True)
    table.add_column()  # words wrap; a 12-character hash prefix in them is one word
    best = summary.get("best")
    unranked = summary.get("unranked", [])
    table.add_row("stopped", summary["stop_reason"])
    speedups = (best or {}).get("speedups", [])
    untimed = summary.get("timed") is False  # nothing was timed (an interpreter backend: correctness only)
    if best is None:
        table.add_row("best", "none correct")
        start = _incorrect_start(run_dir)
        if start and "kstrata show" not in str(summary.get("stop_reason")):  # said once (loop.unfixable_start)
            table.add_row("note", start)
    elif untimed:
        table.add_row("best", f"none ranked: nothing was timed in this run (the backend checks correctness "
                              f"only; best/ holds {best['hash'][:12]}, the first correct candidate)")
    elif none_ranked(summary):  # every correct candidate's timing stayed untrusted: no speedup is claimed
        table.add_row("best", f"none ranked: no speedup is claimed, since the best's timing was not trusted "
                              f"(best/ holds {best['hash'][:12]})")
    else:
        table.add_row("best", best["hash"][:12])
    unconfirmed = _unconfirmed_best(best, run_dir)
    if unconfirmed:
        table.add_row("not verified", unconfirmed)
    shape = summary.get("timing_shape")
    if shape is None and (run_dir / "config.json").is_file():  # a run summarized before it was recorded
        from kstrata.search.loop import timing_shape_of

        try:
            shape = timing_shape_of(jsontext.loads((run_dir / "config.json").read_text()))
        except (OSError, ValueError, AttributeError, TypeError):  # a damaged config.json: no shape line
            shape = None
    which = ""
    if speedups and (run_dir / "run.db").is_file():  # which timing the best's reading is (as tree and show say)
        with RunStore.open(run_dir) as store:
            r = reading(CandidateTree.from_store(store, with_sources=False)[best["hash"]])
        which = "" if r is None else f", {r.which}"
    for s in speedups:
        ci = f" [{s['ci_low']:.3g}, {s['ci_high']:.3g}] (95% interval{which})" if s.get("ci_low") is not None \
            else (f" ({which[2:]})" if which else "")
        word = interval_verdict(s.get("ci_low"), s.get("ci_high"))
        ci += ": a tie, not faster" if word == "a tie" else ": slower" if word == "slower" else ""
        table.add_row(f"speedup vs {s['baseline']}", f"{s['value']:.3g}x{ci}")
    if shape and not untimed:
        note = "" if nominal is None or nominal == shape else \
            f" (not the nominal {shape_text(nominal)}; see --timing-shape)"
        table.add_row("timed at", shape_text(shape) + note)
    if best and best.get("roofline_fraction") is not None:  # as the report shows it
        table.add_row("roofline fraction", f"{best['roofline_fraction']:.1%}"
                      + ("" if speedups else " (from an untrusted timing)"))
    reduced = summary.get("correct_at_reduced_scope") or 0
    table.add_row("verdicts", ", ".join(f"{k} {v}" for k, v in sorted(summary["verdicts"].items()))
                  + (f" ({reduced} of the correct verified at the search's reduced scope only)" if reduced else ""))
    faster = [u for u in unranked if (u.get("speedup") or 0.0) > 1.0]
    if speedups and speedups[0]["value"] <= 1.0:
        table.add_row("note", f"the best ranked candidate is not faster than {speedups[0]['baseline']}"
                      + (f"; {len(faster)} unranked candidate(s) read faster, but their timing was too noisy "
                         "to trust (see below)" if faster else ""))
    if unranked:
        table.add_row("unranked", unranked_line(unranked, run_dir))
    spent = summary["spent"]
    table.add_row("spent", ", ".join(f"{k} {v:g}" for k, v in sorted(spent.items())))
    return table


def not_correct_note(tree: Any) -> str:
    """What a bench cell without a correct candidate of its proposer's shows: ``"none correct"``,
    or, where the run's start (not counted: the proposer's own candidates are) is correct, a phrase
    saying so (newcomer nc17: "none correct" beside a run summary of one correct candidate)."""
    if tree is not None and tree.start_correct():
        return "none correct but the start (the initial candidate is not counted)"
    return "none correct"


def unsupported_note(backend: str, task: Any = "TASK") -> str:
    """What a bench says of an ``unsupported`` cell (no run made): the backend
    ships no starting kernel for the task, and how to give one, naming ``task``
    (:func:`kstrata.shellarg.task_arg`). Newcomer nc22 read 'unsupported | none
    correct' and took it for failed candidates."""
    from kstrata.shellarg import task_arg

    return (f"not run: {backend} ships no starting kernel for this task; give one with "
            f"`kstrata optimize {task_arg(task)} --backend {backend} --initial FILE`")


def bench_table(bench_dir: str | Path) -> Table:
    """One row per bench cell: task, backend, proposer, status, the best
    speedup against the primary baseline with its interval, and verdicts
    (the numbers of :func:`kstrata.bench.results.load_results`, as the report).

    Raises
    ------
    kstrata.store.StoreError
        If ``bench_dir`` is not a bench directory.
    """
    from kstrata.bench.metrics import format_speedup
    from kstrata.bench.results import load_results

    # the verdicts column counts what the proposer made, the speedup note every correct candidate timed
    # (the start included): newcomer nc18 read 'correct 2' beside '3 of them were timed'
    table = Table(title=f"bench {bench_dir}", caption="speedup and verdicts: of the candidates each proposer "
                  "made (the start, the initial candidate, is not counted: a run's own best, in its summary, may "
                  "be the start)")
    for col in ("task", "backend", "proposer", "status"):  # names: never wrapped mid-name
        table.add_column(col, no_wrap=True)
    for col in ("speedup", "verdicts"):
        table.add_column(col)
    results = load_results(bench_dir)
    trees = {str(v.run_dir): v.tree for v in results.runs}
    for o in results.outcomes:
        speedup = unsupported_note(o.backend, o.task) if o.status == "unsupported" \
            else not_correct_note(trees.get(str(o.run_dir))) if not o.correct \
            else format_speedup(o.speedup, o.speedup_ci) if o.speedup is not None \
            else no_speedup_note(trees.get(str(o.run_dir)))
        table.add_row(o.task, o.backend, o.proposer, o.status, speedup + (f" (excluded: {o.excluded})"
                                                                           if o.excluded else ""),
                      ", ".join(f"{k} {v}" for k, v in sorted(o.verdicts.items())))
    return table
