"""Newcomer nc24's verifier cases (case folders ``cases/nc24_*``)."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status

needs_sandbox = pytest.mark.skipif(not status().usable, reason="no sandbox here")
CACHING = "nc24_eps_small_flagged_as_caching"


@needs_sandbox
def test_a_scale_invariant_wrong_kernel_is_incorrect_not_accused_of_caching(kstrata_eval):
    d = kstrata_eval(f"{CACHING}/l2norm.py", f"{CACHING}/l2_eps_small.py", "--no-time")
    assert (d["verdict"], d["check"]) == ("incorrect", "tolerance"), d
    assert "near_zero" in str(d["feedback"]) and "epsilon" in str(d["feedback"]), d["feedback"]


LINEAR = "nc24_linear_param_drawn_differently_not_named"


@needs_sandbox
@pytest.mark.parametrize("candidate, named", [("gl_ones_init.py", ("linear.weight (32, 64)", "linear.bias (32,)")),
                                              ("gl_reinit.py", ("linear.weight (32, 64)",))])
def test_a_linear_weight_drawn_differently_is_named(kstrata_eval, candidate, named):
    d = kstrata_eval(f"{LINEAR}/gelu_linear.py", f"{LINEAR}/{candidate}", "--scope", "small", "--no-time")
    assert d["verdict"] == "incorrect", d
    said = " ".join(i["text"] for i in d["feedback"] if i["kind"] == "parameters")
    assert all(n in said for n in named) and "std" in said, d["feedback"]
    if candidate == "gl_reinit.py":
        assert "linear.bias" not in said, said  # the same nn.Linear call draws the bias alike


def test_modelnews_summary_is_validated_and_only_models_names_are_said():
    import torch

    from kstrata.verify.param_draws import differing, validated

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    forged = [{"name": "evil\x1b[2J", "shape": [3, 4], "mean": 0.0, "std": 1.0, "head": [9.0] * 8},
              {"name": "x", "shape": [3], "mean": float("nan"), "std": 0.0, "head": [0.0] * 3},
              {"name": "y", "shape": "3", "mean": 0.0, "std": 0.0, "head": []}, "junk"]
    got = validated(forged)
    assert [p["name"] for p in got] == ["evil\x1b[2J"]
    said = differing(model, got)
    assert len(said) == 1 and said[0].startswith("weight (3, 4)") and "evil" not in said[0], said
    w = model.weight.detach().reshape(-1)
    same = [{"name": "weight", "shape": [3, 4], "mean": float(w.mean()), "std": float(w.std()),
             "head": [float(v) for v in w[:8]]}]
    assert differing(model, validated(same)) == []


LAYOUT = "nc24_noncontig_no_layout_hint"


@needs_sandbox
def test_a_kernel_that_ignores_a_transposed_inputs_strides_is_told_of_the_layout(kstrata_eval):
    d = kstrata_eval(f"{LAYOUT}/l2norm_t.py", f"{LAYOUT}/l2t_triton_contig_only.py", "--scope", "small",
                     "--no-time", backend="triton-interp")
    assert d["verdict"] == "incorrect", d
    layout = [i for i in d["feedback"] if i["kind"] == "layout"]
    assert layout and layout[0]["data"]["matches_row_major"], d["feedback"]
    assert "strides (1, 8)" in layout[0]["text"] and "transpose" in layout[0]["text"], layout


def test_no_layout_hint_for_contiguous_inputs_or_a_wrong_kernel_that_follows_the_strides():
    import torch

    from kstrata.verify.layout_hint import layout_hint

    model = torch.nn.Softmax(dim=-1)
    x = torch.randn(6, 4).t()
    assert layout_hint(model, [x.contiguous()], [model(x) * 2], 1.0) is None
    assert layout_hint(model, [x], [model(x) + 1e-3], 0.01) is None
    rm = torch.as_strided(x, x.shape, (6, 1))
    got = layout_hint(model, [x], [model(rm.contiguous())], 1.0)
    assert got is not None and got["data"]["matches_row_major"] and "strides (1, 4)" in got["text"], got


@needs_sandbox
def test_a_tanh_gelu_for_the_tasks_erf_gelu_is_named(kstrata_eval):
    d = kstrata_eval(f"{LINEAR}/gelu_linear.py", "nc24_gelu_tanh_generic_feedback/gl_tanh.py", "--scope", "small",
                     "--no-time")
    assert d["verdict"] == "incorrect", d
    said = [i for i in d["feedback"] if i["kind"] == "approximation"]
    assert said and "tanh approximation" in said[0]["text"] and "erf" in said[0]["text"], d["feedback"]


def test_no_gelu_hint_without_a_gelu_or_for_another_bug():
    import torch

    from kstrata.verify.approx_hint import gelu_formula_hint

    x = torch.randn(8, 16) * 3
    gelu = torch.nn.GELU()
    assert gelu_formula_hint(gelu, [x], [torch.nn.functional.gelu(x, approximate="tanh")]) is not None
    assert gelu_formula_hint(gelu, [x], [gelu(x) * 1.01]) is None
    tanh_task = torch.nn.GELU(approximate="tanh")
    got = gelu_formula_hint(tanh_task, [x], [gelu(x)])
    assert got is not None and got["data"]["task"] == "tanh"
    assert gelu_formula_hint(torch.nn.ReLU(), [x], [torch.relu(x) + 1]) is None
