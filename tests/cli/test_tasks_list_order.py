"""``kstrata tasks list`` orders the suite by level, then name: the level-1
quant tasks came after the level-3 ones (the newcomer's report)."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.tasks.loader import suite


def test_suite_listed_by_level_then_name():
    r = CliRunner().invoke(app, ["tasks", "list"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    names = {t.name: t.level for t in suite()}
    rows = []
    for line in r.output.splitlines():
        cells = [c.strip() for c in line.split("│") if c.strip()]
        if cells and cells[0] in names:
            rows.append(cells[0])
    assert len(rows) == len(names)
    assert rows == sorted(rows, key=lambda n: (names[n], n))
