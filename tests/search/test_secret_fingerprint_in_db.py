"""run.db keeps the fingerprint of the run's secret too (red team rt71, sandbox round):
with ``RUN/secret.check`` deleted and ``RUN/secret`` replaced by another run's,
``kstrata optimize --resume`` took the new secret without a word and judged the rest of
the run on another hidden set. Now the run config in run.db holds the fingerprint
(stored at creation; a run made before stores it at its first use from the
``secret.check`` there), a secret that disagrees with either is refused with one
message, and a judged run with neither is accepted with a warning."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.store import RunStore, StoreError
from kstrata.store.secret import CHECK_FILE, CONFIG_KEY, SECRET_FILE, _fingerprint, run_secret

OTHER = "ab" * 32


@pytest.fixture(autouse=True)
def _no_env_secret(monkeypatch):
    monkeypatch.delenv("KSTRATA_SECRET", raising=False)


def _judged(run):
    with RunStore.open(run) as store:
        store.charge("evaluations", 1, ref="c0")


def _config(run):
    with RunStore.open(run) as store:
        return store.config


def test_a_new_run_keeps_the_fingerprint_and_refuses_another_runs_secret(tmp_path):
    run = tmp_path / "run"
    secret = run_secret(run)
    RunStore.create(run, config={"budget": {"evaluations": 8}}).close()
    assert _config(run)[CONFIG_KEY] == _fingerprint(secret) and secret not in (run / "run.db").read_bytes().decode(
        "latin-1")
    _judged(run)
    (run / CHECK_FILE).unlink()
    (run / SECRET_FILE).write_text(OTHER + "\n")  # another run's secret
    with pytest.raises(StoreError, match=r"not the secret this run's candidates were verified with.*run\.db"):
        run_secret(run)
    assert not (run / CHECK_FILE).exists()  # nothing recorded for the wrong secret
    res = CliRunner().invoke(app, ["optimize", "relu", "--backend", "tvm-llvm", "--resume", str(run)])
    assert res.exit_code == 2 and "not the secret this run" in res.output and "Traceback" not in res.output
    (run / SECRET_FILE).write_text(secret + "\n")  # the run's own: fine, and secret.check is written again
    assert run_secret(run) == secret and (run / CHECK_FILE).read_text().strip() == _fingerprint(secret)


def test_an_old_run_stores_it_at_its_first_use_from_secret_check(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / SECRET_FILE).write_text("cd" * 32 + "\n")
    RunStore.create(run, config={"budget": {"evaluations": 8}}).close()  # no secret.check yet: as before
    assert CONFIG_KEY not in _config(run)
    _judged(run)
    (run / CHECK_FILE).write_text(_fingerprint("cd" * 32) + "\n")  # an old run: secret.check only
    assert run_secret(run) == "cd" * 32
    assert _config(run)[CONFIG_KEY] == _fingerprint("cd" * 32)
    (run / CHECK_FILE).unlink()
    (run / SECRET_FILE).write_text(OTHER + "\n")
    with pytest.raises(StoreError, match="not the secret this run"):
        run_secret(run)


def test_a_judged_run_with_neither_fingerprint_is_accepted_with_a_warning(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / SECRET_FILE).write_text(OTHER + "\n")
    RunStore.create(run, config={"budget": {"evaluations": 8}}).close()
    _judged(run)
    assert run_secret(run) == OTHER
    assert "records no fingerprint of its secret" in capsys.readouterr().err
    assert _config(run)[CONFIG_KEY] == _fingerprint(OTHER)  # and from now on it is checked
    assert run_secret(run) == OTHER and capsys.readouterr().err == ""
