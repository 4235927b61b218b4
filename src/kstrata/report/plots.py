"""Inline SVG drawings for the HTML report: speedup strips and candidate trees.

Drawn by hand (no plotting library, no network): each function returns one
``<svg>`` element as text, with every value escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

#: Fill colour per verdict (``None``: not evaluated).
VERDICT_COLOURS = {
    "correct": "#2e9d4f",
    "incorrect": "#e67e22",
    "compile_error": "#c0392b",
    "runtime_error": "#8e44ad",
    "timeout": "#7f8c8d",
    "rejected": "#1f2d3d",
    None: "#c8c8c8",
}


def colour(verdict: str | None) -> str:
    return VERDICT_COLOURS.get(verdict, "#c0392b")


def _fmt_speedup(x: float | None) -> str:
    return "" if x is None else f"{x:.3g}x"


def speedup_strips(rows: Sequence[tuple[str, Sequence[tuple[str, float | None, str | None]]]],
                   width: int = 760) -> str:
    """Per row, each task's best speedup as a dot on a log2 axis (a line at 1x);
    a task whose best is correct but has no ranked speedup (its timing not
    trusted, or not timed) is a hollow circle in an ``unranked`` column left
    of the axis, titled with why; a task with no correct candidate is a red
    cross further left.

    Parameters
    ----------
    rows:
        ``(label, [(task, speedup, note), ...])`` per row: ``speedup`` the
        ranked speedup (a ratio) or ``None``; ``note`` why a correct task has
        none (e.g. ``"correct, unranked (timing not trusted): ..."``), ``None``
        for a task with no correct candidate; beside a speedup, what its
        interval says (``"a tie: not faster ..."``: a grey dot, the note in its
        title). A 2-tuple ``(task, speedup)`` means ``note=None``.
    width:
        Pixels.
    """
    rows = [(label, [(p[0], p[1], p[2] if len(p) > 2 else None) for p in pts]) for label, pts in rows]
    values = [s for _, pts in rows for _, s, _ in pts if s is not None and s > 0]
    lo = min([0.25, *values]) if values else 0.25
    hi = max([4.0, *values]) if values else 4.0
    lo2, hi2 = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    left, right, row_h, top = 230, 20, 34, 24
    # the bottom labels' columns: 'unranked' (8 characters at 11 px) ends clear of the first tick's label
    # ('0.25x', centred on left): at left - 40 the two overlapped (newcomer nc15)
    fail_x, unranked_x = left - 115, left - 62
    plot_w = width - left - right
    height = top + row_h * max(1, len(rows)) + 30

    def x_of(s: float) -> float:
        return left + (math.log2(s) - lo2) / (hi2 - lo2) * plot_w

    out = [f'<svg class="strip" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
           f'aria-label="speedup distribution">']
    for e in range(lo2, hi2 + 1):
        x = x_of(2.0 ** e)
        stroke = "#333" if e == 0 else "#ddd"
        out.append(f'<line x1="{x:.1f}" y1="{top - 8}" x2="{x:.1f}" y2="{height - 24}" '
                   f'stroke="{stroke}" stroke-width="{1.5 if e == 0 else 1}"/>')
        out.append(f'<text x="{x:.1f}" y="{height - 8}" font-size="11" text-anchor="middle">'
                   f'{2.0 ** e:g}x</text>')
    out.append(f'<text x="{fail_x}" y="{height - 8}" font-size="11" text-anchor="middle" '
               f'fill="#c0392b">fail</text>')
    out.append(f'<text x="{unranked_x}" y="{height - 8}" font-size="11" text-anchor="middle" '
               f'fill="#555">unranked</text>')
    for i, (label, pts) in enumerate(rows):
        y = top + i * row_h + row_h / 2
        out.append(f'<text x="4" y="{y + 4:.1f}" font-size="12">{escape(label)}</text>')
        for j, (task, s, note) in enumerate(pts):
            jitter = ((j * 7919) % 11 - 5) * 1.6  # deterministic spread of ties
            if (s is None or s <= 0) and note:
                out.append(f'<circle class="unranked" cx="{unranked_x + jitter / 2:.1f}" cy="{y + jitter:.1f}" '
                           f'r="5" fill="none" stroke="#2e86c1" stroke-width="2"><title>{escape(task)}: '
                           f'{escape(note)}</title></circle>')
            elif s is None or s <= 0:
                cx, cy = fail_x + jitter / 2, y + jitter
                out.append(f'<g class="fail"><title>{escape(task)}: not correct</title>'
                           f'<path d="M{cx - 4:.1f},{cy - 4:.1f}L{cx + 4:.1f},{cy + 4:.1f}'
                           f'M{cx - 4:.1f},{cy + 4:.1f}L{cx + 4:.1f},{cy - 4:.1f}" '
                           f'stroke="#c0392b" stroke-width="2"/></g>')
            else:  # a ranked speedup; its note, if any, says what its interval does (a tie: not faster)
                out.append(f'<circle cx="{x_of(s):.1f}" cy="{y + jitter:.1f}" r="5" '
                           f'fill="{"#999" if note else "#2e86c1"}" fill-opacity="0.75"><title>{escape(task)}: '
                           f'{_fmt_speedup(s)}{f" ({escape(note)})" if note else ""}</title></circle>')
    out.append("</svg>")
    return "".join(out)


def tree_layout(nodes: Sequence[tuple[str, str | None]]) -> dict[str, tuple[float, int]]:
    """Positions ``{id: (x, depth)}`` of a forest given ``(id, first parent)`` pairs
    in creation order: leaves take consecutive ``x`` (0, 1, ...) in depth-first
    order, a parent sits at the mean ``x`` of its children."""
    children: dict[str | None, list[str]] = {}
    ids = {n for n, _ in nodes}
    for n, parent in nodes:
        children.setdefault(parent if parent in ids else None, []).append(n)
    pos: dict[str, tuple[float, int]] = {}
    next_leaf = [0.0]

    def place(n: str, depth: int) -> float:
        kids = children.get(n, [])
        if not kids:
            x = next_leaf[0]
            next_leaf[0] += 1
        else:
            xs = [place(k, depth + 1) for k in kids]
            x = sum(xs) / len(xs)
        pos[n] = (x, depth)
        return x

    stack_roots = children.get(None, [])
    for root in stack_roots:
        place(root, 0)
    return pos


#: width of one character of the tree's 11 px sans-serif labels, in px (an upper bound for
#: digits and lower-case letters; wide capitals are rare in labels)
CHAR_W = 6.6
#: longest first label line (level and role), in characters; longer roles are cut with an ellipsis
ROLE_CHARS = 30


def _node_labels(n: dict[str, Any]) -> tuple[str, str]:
    """The two label lines of a tree node: level and role; verdict, speedup and marks."""
    line1 = f'{n.get("level") or "initial"} · {n.get("role")}'
    if len(line1) > ROLE_CHARS:
        line1 = line1[:ROLE_CHARS - 1] + "…"
    line2 = f'{n.get("verdict") or "not evaluated"} {_fmt_speedup(n.get("speedup"))}'.strip()
    if n.get("retimed"):
        line2 += " re-timed"
    if n.get("unranked"):
        line2 += " unranked"
    return line1, line2


def tree_svg(nodes: Sequence[dict[str, Any]], run_id: str) -> str:
    """The candidate tree as SVG: one circle per candidate coloured by verdict,
    labelled with level, role and speedup; ``data-node`` carries the hash for the
    report's click handler, and the ``<svg>``'s ``data-root-x`` the first root's
    x (px), which the report's script scrolls a wide tree to.

    Parameters
    ----------
    nodes:
        Dicts with ``hash``, ``parent`` (first parent or ``None``), ``level``,
        ``role``, ``verdict``, ``speedup``, ``best`` (bool), and optionally
        ``retimed`` and ``unranked`` (bools), in creation order.
    run_id:
        Id of the run in the page (``data-run``).
    """
    pos = tree_layout([(n["hash"], n["parent"]) for n in nodes])
    labels = {n["hash"]: _node_labels(n) for n in nodes}
    # a column is as wide as the longest label (leaves sit one column apart), so neighbours' labels never overlap
    widest = max((len(t) for pair in labels.values() for t in pair), default=0)
    col_w, row_h, pad = max(150, math.ceil(widest * CHAR_W) + 16), 86, 40
    n_cols = max((x for x, _ in pos.values()), default=0) + 1
    depth = max((d for _, d in pos.values()), default=0) + 1
    width, height = int(n_cols * col_w + 2 * pad), int(depth * row_h + pad)

    def xy(h: str) -> tuple[float, float]:
        x, d = pos[h]
        return pad + x * col_w + col_w / 2 - pad / 2, pad / 2 + 14 + d * row_h

    # the first root's x (px): the report's script scrolls a tree wider than its box to it (newcomer nc25: the
    # root sat at the mean x of its children, past the box's right edge, its label cut)
    root = next((n["hash"] for n in nodes if n["parent"] not in pos), None)
    root_x = f' data-root-x="{xy(root)[0]:.1f}"' if root is not None else ""
    out = [f'<svg class="tree" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" data-run="{escape(run_id)}"{root_x} '
           f'role="img" aria-label="candidate tree">']
    for n in nodes:
        if n["parent"] in pos:
            (x1, y1), (x2, y2) = xy(n["parent"]), xy(n["hash"])
            out.append(f'<path d="M{x1:.1f},{y1:.1f}C{x1:.1f},{(y1 + y2) / 2:.1f} {x2:.1f},'
                       f'{(y1 + y2) / 2:.1f} {x2:.1f},{y2:.1f}" fill="none" stroke="#999"/>')
    for n in nodes:
        x, y = xy(n["hash"])
        verdict = n.get("verdict")
        stroke = ' stroke="#f1c40f" stroke-width="4"' if n.get("best") else ' stroke="#fff" stroke-width="1.5"'
        line1, line2 = labels[n["hash"]]
        out.append(
            f'<g class="node" data-node="{escape(n["hash"])}" data-verdict="{escape(verdict or "pending")}" '
            f'tabindex="0" style="cursor:pointer"><title>{escape(n["hash"][:12])}</title>'
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="11" fill="{colour(verdict)}"{stroke}/>'
            f'<text x="{x:.1f}" y="{y + 26:.1f}" font-size="11" text-anchor="middle">'
            f'{escape(line1)}</text>'
            f'<text x="{x:.1f}" y="{y + 39:.1f}" font-size="11" text-anchor="middle" '
            f'fill="#555">{escape(line2)}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)
