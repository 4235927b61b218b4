"""Stand-in zygote starts for tests of kstrata.sandbox.client's idle list and spares: no sandbox runs."""

from __future__ import annotations


class _Proc:
    def __init__(self):
        self.dead = False

    def poll(self):
        return 1 if self.dead else None


def fake_zygotes(monkeypatch, spares: int, cap: int = 4) -> tuple[list, list]:
    """Make ``Zygote.start`` a stand-in and empty the idle list; returns ``(starts, kills)``, the zygotes
    started and ended from here on. ``spares``: :func:`kstrata.sandbox.client.spare_target`; ``cap``:
    ``MAX_IDLE_ZYGOTES``."""
    from kstrata.sandbox import client

    monkeypatch.setenv(client.SPARES_ENV, str(spares))
    monkeypatch.setattr(client, "MAX_IDLE_ZYGOTES", cap)
    monkeypatch.setattr(client, "_IDLE", [])
    monkeypatch.setattr(client, "_STARTING", {})
    starts, kills = [], []

    def start(z, *a, **k):
        z.proc = _Proc()
        starts.append(z)
        return z

    def kill(z):
        kills.append(z)
        if z.proc is not None:
            z.proc.dead = True

    monkeypatch.setattr(client.Zygote, "start", start)
    monkeypatch.setattr(client.Zygote, "kill", kill)
    monkeypatch.setattr(client.Zygote, "alive", lambda z: z.proc is not None and not z.proc.dead)
    return starts, kills
