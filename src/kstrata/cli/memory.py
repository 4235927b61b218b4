"""``kstrata memory list|show|export|import``: the agents' long-term skill store.

The store is ``--memory PATH`` (``--db`` is the same option), else ``$KSTRATA_MEMORY_DB``, else
``~/.cache/kstrata/memory.db`` (:mod:`kstrata.agents.memory`). Export writes
JSON lines; import reads them back, validating every line before writing any.
"""

from __future__ import annotations

import io
import sqlite3
import sys
from pathlib import Path

import typer
from rich.syntax import Syntax
from rich.table import Table

from kstrata.cli.errors import Console, OptionError, user_errors

console = Console()
app = typer.Typer(help="The agents' memory of transformations that worked.", no_args_is_help=True)

_DB = typer.Option(None, "--memory", "--db",
                   help="Memory database (default $KSTRATA_MEMORY_DB or ~/.cache/kstrata/memory.db); the same "
                        "option as `kstrata optimize --memory`.")
#: why a store holds no skill (:meth:`kstrata.agents.hierarchical.HierarchicalProposer.learn`)
NO_SKILL = ("a skill is stored only for a proposal of the hierarchical proposer that beat its parent by more than "
            "2%, both verified correct and both timings trusted (never a timing marked untrusted, as on a "
            "contended machine: `kstrata retime RUN` re-times a run, but stores no skill)")


def _open(db: Path | None, must_exist: bool = True):
    from kstrata.agents.memory import MemoryFileError, MemoryStore, default_path

    path = db or default_path()
    if must_exist and not path.exists():
        raise OptionError(f"no memory database at {path}; run `kstrata optimize --proposer hierarchical` "
                          "first, or pass --memory PATH")
    try:
        return MemoryStore(path)
    except (MemoryFileError, sqlite3.DatabaseError) as e:
        raise OptionError(f"{path} is not a kstrata memory database: {e}") from None


@app.command("list")
def list_cmd(
    db: Path | None = _DB,
    category: str | None = typer.Option(None, "--category", help="Only this task category."),
    backend: str | None = typer.Option(None, "--backend", help="Only this backend."),
) -> None:
    """Stored skills, best speedup first."""
    with user_errors():
        with _open(db) as store:
            skills = store.skills(category, backend)
            proposals, runs = store.attempt_counts()
    table = Table()
    for col in ("id", "speedup", "level", "backend", "category", "task", "role"):  # never wrapped mid-name
        table.add_column(col, no_wrap=True)
    table.add_column("description")
    for s in skills:
        table.add_row(str(s.id), f"{s.speedup:.3g}x", s.level, s.backend, s.category, s.task, s.role,
                      s.description[:80])
    console.print(table)
    console.print(f"{len(skills)} skill(s)")
    if not skills:
        seen = (f"{proposals} proposal(s) of {runs} run(s) are recorded in {db or 'this store'}, none qualified"
                if proposals else "no run has recorded a proposal here")
        filt = " with these filters" if category or backend else ""
        console.print(f"none{filt}: {seen}; {NO_SKILL}", soft_wrap=True)


@app.command("show")
def show_cmd(skill_id: int = typer.Argument(..., metavar="SKILL_ID", help="A skill id from `kstrata memory list`."),
             db: Path | None = _DB) -> None:
    """One skill: context, speedup and the diff of the level it changed."""
    with user_errors():
        with _open(db) as store:
            try:
                s = store.skill(skill_id)
            except KeyError as e:
                raise OptionError(str(e.args[0])) from None
    console.print(f"skill {s.id}: {s.level} level on {s.backend}"
                  f"{f' ({s.hardware})' if s.hardware else ''}, {s.speedup:.3g}x over its parent")
    console.print(f"task {s.task} ({s.category}), by {s.role}, run {s.run}, stored {s.created}")
    if s.description:
        console.print(s.description)
    console.print(Syntax(s.diff or s.after, "diff"))


@app.command("export")
def export_cmd(out: Path | None = typer.Argument(None, metavar="OUT", help="JSON-lines file (default: stdout)."),
               db: Path | None = _DB) -> None:
    """Every skill as one JSON line."""
    from kstrata.store.artifacts import write_atomic

    with user_errors():
        with _open(db) as store:
            buf = io.StringIO()
            n = store.export_jsonl(buf)
        if out is None:
            sys.stdout.write(buf.getvalue())
        else:
            write_atomic(out, buf.getvalue())
            console.print(f"exported {n} skill(s) to {out}")


#: characters a ``kstrata memory import`` file may hold (a skill is a few KB; this is 100,000 of them)
MAX_IMPORT_CHARS = 256_000_000


@app.command("import")
def import_cmd(path: Path = typer.Argument(..., metavar="PATH", help="A JSON-lines file from `kstrata memory export`."),
               db: Path | None = _DB) -> None:
    """Add the skills of PATH (all or nothing; duplicates are skipped)."""
    from kstrata.agents.memory import MemoryFileError

    with user_errors():
        if not path.is_file():
            raise OptionError(f"no file {path}")
        with _open(db, must_exist=False) as store:
            from kstrata.textfile import TextTooLarge, read_text

            try:  # bounded: a file larger than memory was read whole (red team rt65)
                added, present = store.import_jsonl(read_text(path, MAX_IMPORT_CHARS, "a memory export").splitlines())
            except TextTooLarge as e:
                raise OptionError(f"{e}; nothing imported") from None
            except MemoryFileError as e:
                raise OptionError(f"{path}: {e}; nothing imported") from None
    console.print(f"imported {added} skill(s); {present} already present")
