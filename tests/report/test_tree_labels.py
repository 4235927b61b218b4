"""The candidate tree's labels do not overlap (newcomer nc14: sibling leaves sat
150 px apart while a label such as 'runtime_error 1.23x re-timed unranked' is
~250 px wide at 11 px, so neighbours' labels ran into each other)."""

from __future__ import annotations

import re

from kstrata.report.plots import CHAR_W, tree_svg


def _nodes(k: int) -> list[dict]:
    root = {"hash": "r" * 64, "parent": None, "level": None, "role": "initial", "verdict": "correct",
            "speedup": 1.0, "best": False}
    kids = [{"hash": f"{i:064d}", "parent": "r" * 64, "level": "schedule", "role": "schedule-rules:gpu_rows_long",
             "verdict": "runtime_error", "speedup": 1.234, "best": False, "retimed": True, "unranked": True}
            for i in range(k)]
    return [root, *kids]


def test_sibling_labels_are_at_least_their_width_apart():
    svg = tree_svg(_nodes(4), "run")
    circles = [float(x) for x in re.findall(r'<circle cx="([0-9.]+)"', svg)]
    texts = re.findall(r'<text x="[0-9.]+" y="[0-9.]+"[^>]*>([^<]*)</text>', svg)
    leaves = sorted(circles[1:])
    widest = max(len(t) for t in texts) * CHAR_W
    assert "runtime_error" in " ".join(texts) and "unranked" in " ".join(texts)
    assert min(b - a for a, b in zip(leaves, leaves[1:])) >= widest
    width = float(re.search(r'<svg[^>]* width="([0-9]+)"', svg).group(1))
    assert max(leaves) + widest / 2 <= width  # the last label fits in the picture


def test_a_long_role_is_cut_with_an_ellipsis_not_silently():
    nodes = _nodes(1)
    nodes[1]["role"] = "x" * 80
    svg = tree_svg(nodes, "run")
    assert "…" in svg and "x" * 80 not in svg
