"""``kstrata eval --show-hidden``: a person checking their own kernel can see the
hidden test it failed (newcomer nc14: a kernel wrong only when D % 4 == 2 was
told "a hidden test fails" and nothing else); only under a secret of the
call's own, and never without the flag."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kstrata.cli.main import app

WRONG_WHEN_D_MOD_4_IS_2 = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        if x.shape[-1] % 4 == 2:
            y = y + 1.0
        return y
'''


def _eval(tmp_path, *extra):
    cand = tmp_path / "relu_d.py"
    cand.write_text(WRONG_WHEN_D_MOD_4_IS_2)
    return CliRunner().invoke(app, ["eval", "relu", str(cand), "--scope", "small", "--no-time", *extra],
                              env={"COLUMNS": "300"})


def test_show_hidden_names_the_failing_hidden_test(tmp_path):
    r = _eval(tmp_path, "--show-hidden", "--json")
    ev = json.loads(r.output[r.output.index("{"):])
    assert ev["verdict"] == "incorrect" and ev["evidence"]["stage"] == "hidden"
    shape = ev["evidence"]["hidden_test"]["shape"]
    assert shape["D"] % 4 == 2, shape


def test_without_it_the_hidden_test_stays_secret_and_the_flag_is_named(tmp_path):
    r = _eval(tmp_path)
    assert "incorrect" in r.output and "hidden_test" not in r.output
    assert "--show-hidden" in r.output


def test_it_refuses_a_given_secret(tmp_path):
    r = _eval(tmp_path, "--show-hidden", "--secret", "known")
    assert r.exit_code == 2 and "drop --secret" in r.output
