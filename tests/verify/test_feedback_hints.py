"""Feedback for two newcomer cases (../shared/cases/newcomer): a ModelNew whose
weight is drawn differently from Model's (ones instead of 1 + 0.1 * randn) is
told which parameter differs and that both are built after the same seed; a
kernel that skips its last partial BLOCK=64 tile is told every block size the
tail fits, 64 included (it used to say only 77 = 4 x 16 + 13)."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.verify.feedback import describe_tensor, parameter_hint

WEIGHT_ONES = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))  # Model: 1 + 0.1 * randn(dim)

    def forward(self, x):
        ms = torch.mean(x * x, dim=-1, keepdim=True)
        return x * torch.rsqrt(ms + self.eps) * self.weight
'''


class _Norm(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(d))


def test_parameter_hint_names_the_parameter_and_what_modelnew_holds():
    torch.manual_seed(0)
    model, x = _Norm(96), torch.randn(8, 96)
    oracle = (x * model.weight).double()
    hint = parameter_hint(model, x, oracle)  # ModelNew's weight: ones
    assert hint is not None and hint["kind"] == "parameters" and hint["data"]["parameters"] == ["weight"]
    assert "same seed" in hint["text"] and "weight (96,)" in hint["text"] and "constant 1" in hint["text"]
    assert parameter_hint(model, 2 * oracle, oracle) is None  # one factor for all: not a parameter
    noisy = oracle + 0.01 * torch.randn_like(oracle)
    assert parameter_hint(model, noisy, oracle) is None  # not constant down the columns


def test_tail_tile_names_every_block_the_tail_fits():
    o = torch.randn(4, 77, dtype=torch.float64)
    c = o.clone()
    c[:, 64:] = 0
    bad = c != o
    items = describe_tensor(c, o, bad, {"max_err": 1.0})
    tail = next(i for i in items if i["kind"] == "tail_tile")
    assert tail["data"]["tiles"] == [16, 32, 64] and tail["data"]["tile"] == 64
    assert "1 x 64 + 13" in tail["text"] and "indices 64-76" in tail["text"]


def _tail(c, o):
    return next(i for i in describe_tensor(c, o, c != o, {"max_err": 1.0}) if i["kind"] == "tail_tile")


def test_tail_tile_names_exactly_the_wrong_indices():
    # newcomer nc11: a softmax whose store mask was off by one had only column 76 of 77 wrong, and the
    # hint said "only the last 13 elements ... (indices 64-76) are wrong"
    o = torch.randn(4, 77, dtype=torch.float64)
    c = o.clone()
    c[:, 76] = 0
    tail = _tail(c, o)
    assert tail["data"]["wrong"] == [76] and not tail["data"]["exact"]
    assert tail["text"].startswith("only the last element along the last dimension (index 76, of 77) is wrong")
    assert "off-by-one" in tail["text"] and "13 elements" not in tail["text"]
    c = o.clone()
    c[:, 70:73] = 0  # inside the tail, not at its end
    tail = _tail(c, o)
    assert tail["data"]["wrong"] == [70, 71, 72] and "(indices 70-72, of 77) are wrong" in tail["text"]
    o = torch.randn(3, 100, dtype=torch.float64)
    c = o.clone()
    c[:, 96:] = 0  # the whole tail of a 16 or 32 block, part of a 64 block's (64-99)
    tail = _tail(c, o)
    assert tail["data"]["exact"] and "(indices 96-99, of 100) are wrong" in tail["text"]
    assert "100 = 3 x 32 + 4 = 6 x 16 + 4" in tail["text"] and "64" not in tail["text"]


def test_eval_of_the_weight_ones_case_gives_the_parameter_hint(tmp_path):
    cand = tmp_path / "rmsnorm_torch_weight_ones.py"
    cand.write_text(WEIGHT_ONES)
    r = CliRunner().invoke(app, ["eval", "rmsnorm", str(cand), "--backend", "pytorch", "--no-time", "--json",
                                 "--scope", "small"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["verdict"] == "incorrect"
    kinds = {f["kind"]: f["text"] for f in out["feedback"]}
    assert "parameters" in kinds and "weight" in kinds["parameters"] and "same seed" in kinds["parameters"]


class _Biased(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.bias = torch.nn.Parameter(0.1 * torch.randn(d))


def test_parameter_hint_names_a_bias_drawn_differently():
    """newcomer nc14: a ModelNew with bias = zeros (Model: 0.1 * randn) got no parameters line."""
    torch.manual_seed(0)
    model, x = _Biased(64), torch.randn(8, 64)
    oracle = (2 * x + model.bias).double()
    hint = parameter_hint(model, 2 * x, oracle)  # ModelNew's bias: zeros
    assert hint is not None and hint["data"]["form"] == "offset" and hint["data"]["parameters"] == ["bias"]
    assert "offset in each column" in hint["text"] and "bias (64,)" in hint["text"]
    assert parameter_hint(model, oracle + 0.5, oracle) is None  # one offset for all: not a parameter
    assert parameter_hint(model, oracle + 0.01 * torch.randn_like(oracle), oracle) is None


def test_sign_hint_says_the_wrong_elements_are_the_negative_inputs():
    from kstrata.verify.feedback import sign_hint

    x = torch.randn(16, 33)
    good = torch.nn.functional.gelu(x).double()
    cand = torch.where(x < 0, torch.zeros_like(x), torch.nn.functional.gelu(x)).double()
    bad = (cand - good).abs() > 1e-4
    hint = sign_hint([x], bad)
    assert hint is not None and hint["data"]["sign"] == "negative" and "input 0 is negative" in hint["text"]
    assert sign_hint([x], torch.ones_like(bad)) is None  # wrong everywhere: no sign in common
    assert sign_hint([x[:, :5]], bad) is None  # no input of the output's shape


GELU_NEG = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.where(x < 0, torch.zeros_like(x), torch.nn.functional.gelu(x))
'''


def test_eval_of_a_gelu_wrong_for_negative_inputs_says_so(tmp_path):
    cand = tmp_path / "gelu_neg.py"
    cand.write_text(GELU_NEG)
    r = CliRunner().invoke(app, ["eval", "gelu", str(cand), "--backend", "pytorch", "--scope", "small", "--json"])
    ev = json.loads(r.output[r.output.index("{"):])
    assert ev["verdict"] == "incorrect"
    signs = [f for f in ev["feedback"] if f["kind"] == "input_sign"]
    assert signs and signs[0]["data"]["sign"] == "negative", ev["feedback"]


LAST_ROW_UNWRITTEN = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        out[:-1] = torch.softmax(x[:-1], dim=-1)
        return out
'''


def test_an_unwritten_last_row_is_not_told_as_a_read_outside_an_input_alone(tmp_path):
    """newcomer nc14: the unwritten last row got an edge_read item blaming out-of-bounds loads as well."""
    cand = tmp_path / "uninit.py"
    cand.write_text(LAST_ROW_UNWRITTEN)
    r = CliRunner().invoke(app, ["eval", "softmax", str(cand), "--backend", "pytorch", "--scope", "small", "--json"])
    ev = json.loads(r.output[r.output.index("{"):])
    kinds = {f["kind"]: f for f in ev["feedback"]}
    assert ev["verdict"] == "incorrect" and "unwritten_memory" in kinds, ev["feedback"]
    assert kinds["edge_read"]["text"].startswith("either an output row the kernel never writes")


def test_values_item_shows_expected_and_got_and_a_common_value():
    """queue-model round 2026-12-04: an int8 kernel clamping to -127 was told where, not what."""
    o = torch.tensor([[-128.0, 5.0, -128.0], [3.0, -128.0, 7.0]], dtype=torch.float64)
    c = o.clone()
    c[o == -128] = -127
    items = describe_tensor(c, o, c != o, {})  # integer outputs: no max_err in the stats
    share = next(i for i in items if i["kind"] == "wrong_share")
    assert "max error 1" in share["text"] and "nan" not in share["text"]
    vals = next(i for i in items if i["kind"] == "values")
    assert "[0, 0]: -128 -> -127" in vals["text"] and "every wrong element is -127" in vals["text"]
    assert vals["data"]["samples"][0] == [[0, 0], -128.0, -127.0]


def _softmax(x: torch.Tensor) -> torch.Tensor:
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def test_values_item_names_a_per_row_factor_and_an_offset_up_to_rounding():
    """Queue round 5: padding sent through exp into a softmax's row sum makes
    each row a constant factor of its expected values, and into a mean of exp
    adds about the same amount to every element; the values line listed five
    pairs and named neither (its 'off by' note needed bit-equal differences)."""
    torch.manual_seed(0)
    x = torch.randn(5, 77, dtype=torch.float64)
    o = _softmax(x)
    padded = torch.cat([x, torch.zeros(5, 51, dtype=torch.float64)], dim=1)  # other=0.0, exp applied
    c = (torch.exp(x - x.max(dim=-1, keepdim=True).values)
         / torch.exp(padded - padded.max(dim=-1, keepdim=True).values).sum(dim=-1, keepdim=True)).float().double()
    vals = next(i for i in describe_tensor(c, o, c != o, {}) if i["kind"] == "values")
    assert "within each row the wrong elements are their expected values times one factor of that row" in vals["text"]
    factor = float(c[0, 0] / o[0, 0])
    assert f"row 0: x{factor:.4g}" in vals["text"] and "includes padded lanes?" in vals["text"]
    # mean(exp(x)) over 77 columns with 3 padded lanes read as 0.0: +3/77 on every row, up to rounding
    m = torch.exp(x).mean(dim=-1)
    got = ((torch.exp(x).sum(dim=-1) + 3) / 77).float().double()
    vals = next(i for i in describe_tensor(got, m, got != m, {}) if i["kind"] == "values")
    assert "every wrong element is off by about +0.0389" in vals["text"] and "the same amount up to rounding" in vals["text"]
    # a correct-looking scale of 1, or differences that vary, give neither note
    noisy = o * (1 + 0.01 * torch.rand_like(o))
    vals = next(i for i in describe_tensor(noisy, o, noisy != o, {}) if i["kind"] == "values")
    assert "factor" not in vals["text"] and "off by" not in vals["text"]


def test_a_row_normalizer_missing_a_tail_element_is_named_a_per_row_factor():
    """Newcomer nc17: an l2norm whose row sum dropped the row's last element (D = 513) said only "60.93%
    wrong, rows 0-5, 7-20"; its factors are ~1.0003-1.002, which the note took for 1 and left out."""
    torch.manual_seed(0)
    x = torch.randn(8, 513, dtype=torch.float64)
    o = x / x.norm(dim=1, keepdim=True)
    c = x / x[:, :512].norm(dim=1, keepdim=True)
    bad = (c - o).abs() > 1e-5 + 1e-4 * o.abs()
    vals = next(i for i in describe_tensor(c, o, bad, {}) if i["kind"] == "values")
    assert "times one factor of that row" in vals["text"], vals["text"]
    assert f"row 1: x{float(c[1, 0] / o[1, 0]):.7g}" in vals["text"]  # shown beyond 1.000


def test_an_in_domain_comparison_locates_at_the_outputs_own_indices(monkeypatch):
    """Queue round 5 (add_layernorm, offset draw): a test compared again on
    the elements inside the task's numerical domain located its wrong
    elements in the flat list of those elements: 'wrong elements of the
    output (shape (4009,)) at indices along dim 0 (size 4009): 0-150, ...'
    for an (8, 512) output. The mask is put back at the output's indices, and
    the share says how many elements the domain left out."""
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import domain
    from kstrata.verify.runner import ShapeRun
    from kstrata.verify.tolerance import compare

    tol = resolve_task("layernorm").meta.tolerance
    torch.manual_seed(0)
    o = torch.randn(8, 512, dtype=torch.float64)
    r = o.float()
    c = r.clone()
    c[3, 100:200] += 1.0  # wrong in row 3 only
    keep = torch.ones(8, 512, dtype=torch.bool)
    keep[0, :87] = False  # the domain leaves 87 elements of row 0 out
    monkeypatch.setattr(domain, "in_domain", lambda ref, oracle, t, finite=False, candidate=None: keep)
    (comp,) = ShapeRun._in_domain_comparisons(compare, [c], [o], [r], [None], tol)
    assert not comp.ok and tuple(comp.bad.shape) == (8, 512)
    assert comp.bad[3, 100:200].all() and int(comp.bad.sum()) == 100
    items = describe_tensor(c.double(), o, comp.bad, comp.stats)
    kinds = {i["kind"]: i["text"] for i in items}
    assert "dim 0 (size 8): 3; dim 1 (size 512): 100-199" in kinds["rows_cols"]
    assert kinds["wrong_share"].startswith("100 of 4009 elements wrong")
    assert "87 elements where the task's own reference is wrong too are not counted" in kinds["wrong_share"]
    assert "[3, 100]:" in kinds["values"]


#: a one-pass variance layernorm (red-team case rt41): wrong on the offset draw only
ONE_PASS_VARIANCE = Path(__file__).parent / "cases" / "rt41_offset_exposed" / "layernorm_one_pass.py"


def test_a_failure_on_few_draws_says_what_those_draws_test():
    """Queue round 5: 'fails for inputs drawn offset' of a one-pass variance
    named the draw but not what it stresses (that stood only in the task's
    list of draws, far above the failure)."""
    from kstrata.verify.feedback import _draw_hint

    assert _draw_hint(["large", "offset"]) == (
        " (large: the normal draw times 100 (overflow in exp or accumulators); offset: the normal draw +-1000 "
        "by row (one-pass variance cancels; padding near zero loses))")
    assert _draw_hint(["large", "offset", "grid"]) == ""  # many draws: no one reason
    r = CliRunner().invoke(app, ["eval", "layernorm", str(ONE_PASS_VARIANCE), "--backend", "pytorch", "--scope", "small",
                                 "--no-time", "--json"])
    ev = json.loads(r.output[r.output.index("{"):])
    kinds = {f["kind"]: f for f in ev["feedback"]}
    assert ev["verdict"] == "incorrect" and "distributions" in kinds, ev
    assert "offset: the normal draw +-1000 by row (one-pass variance cancels" in kinds["distributions"]["text"]
