"""What an agent sees: sweep shapes stripped, hidden shapes and seeds redacted."""

import ast

from kstrata.serve.public import HIDDEN, hidden_markers, public_source, public_task, redact_hidden
from kstrata.tasks.loader import resolve_task


def test_public_source_drops_sweep_and_still_parses():
    task = resolve_task("relu")
    text = public_source(task)
    assert "65537" in task.source and "65537" not in text
    assert "sweep" not in text and "small" in text
    ast.parse(text)
    info = public_task(task, ("source",))
    assert [s["shape"] for s in info["public_shapes"]] == [task.full_shape(s) for s in task.small_shapes]
    assert info["nominal"]["flops"] == task.flops() and info["levels"] == ["source"]
    assert "65537" not in repr(info)


def test_redact_hidden_shapes_and_seeds():
    task = resolve_task("relu")
    shapes, seeds = hidden_markers(task, "s3cret")
    assert {"B": 127, "D": 1001} in shapes and seeds
    seed = sorted(seeds)[0]
    evidence = {
        "test": {"shape": {"B": 127, "D": 1001}, "seed": seed},
        "message": f"fails at B=127, D=1001 (127x1001), seed {seed}",
        "public": {"shape": {"B": 8, "D": 512}, "seed": 0},
    }
    out = redact_hidden(evidence, task, "s3cret")
    assert out["test"]["shape"] == HIDDEN and out["test"]["seed"] == HIDDEN
    assert "127" not in out["message"] and "1001" not in out["message"]
    assert str(seed) not in repr(out)
    assert out["public"] == {"shape": {"B": 8, "D": 512}, "seed": 0}
