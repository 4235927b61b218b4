"""Per-category exemplars of good kernels, written for kstrata, as data files.

Each ``*.toml`` beside this module holds ``title``, ``categories``,
``backends``, ``levels``, ``notes`` (why it is fast, with the source of the
technique) and ``code``, optionally ``schedule`` (for a TVM graph
exemplar: the schedule-level text that goes with it, shown after the code
and verified with it), ``min_intensity`` (the least arithmetic
intensity, FLOP per minimum byte at the task's nominal shape, the recipe is
for: a compute-bound GEMM recipe is no exemplar for a memory-bound GEMV of the
same category), and a ``[check]`` table saying how the code is
verified (``tests/agents/test_exemplars.py`` runs every exemplar through the
verifier at every sweep shape of its ``task`` on its ``backend``: ``candidate``
with ``{code}`` for a whole-file level, or the task's initial candidate with
the code, its ``replace`` placeholders filled, at ``level``).
:func:`exemplars_for` picks those for a task's category, backend and the
level being edited, for the prompt.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

_DIR = Path(__file__).parent


@dataclass(frozen=True)
class Exemplar:
    """One exemplar kernel (see the module docstring)."""

    name: str
    title: str
    categories: tuple[str, ...]
    backends: tuple[str, ...]
    levels: tuple[str, ...]
    notes: str
    code: str
    check: tuple[tuple[str, Any], ...] = ()
    min_intensity: float = 0.0
    schedule: str = ""

    def check_sources(self, initial: dict[str, str]) -> dict[str, str]:
        """The candidate its ``[check]`` describes, from the task's ``initial``
        sources on the check's backend.

        Raises
        ------
        ValueError
            When the exemplar has no ``[check]`` table.
        """
        check = dict(self.check)
        if not check:
            raise ValueError(f"exemplar {self.name} has no [check] table")
        code = self.code
        for old, new in dict(check.get("replace") or {}).items():
            code = code.replace(old, new)
        text = check["candidate"].replace("{code}", code).strip() + "\n" if "candidate" in check else code + "\n"
        out = {**initial, check["level"]: text}
        if self.schedule and check["level"] == "graph":
            out["schedule"] = self.schedule + "\n"
        return out


@lru_cache(maxsize=1)
def all_exemplars() -> tuple[Exemplar, ...]:
    """Every exemplar file, by file name order.

    Raises
    ------
    ValueError
        For a file that lacks a field (a bug in kstrata's data files).
    """
    out = []
    for path in sorted(_DIR.glob("*.toml")):
        d = tomllib.loads(path.read_text())
        try:
            out.append(Exemplar(path.stem, d["title"], tuple(d["categories"]), tuple(d["backends"]),
                                tuple(d["levels"]), d["notes"].strip(), d["code"].strip("\n"),
                                tuple(sorted((d.get("check") or {}).items())),
                                float(d.get("min_intensity", 0.0)), str(d.get("schedule", "")).strip("\n")))
        except KeyError as e:
            raise ValueError(f"exemplar {path.name} lacks {e}") from None
    return tuple(out)


def exemplars_for(category: str, backend: str, level: str, k: int = 2,
                  intensity: float | None = None, tags: tuple[str, ...] = ()) -> list[Exemplar]:
    """Up to ``k`` exemplars for ``category`` on ``backend`` at ``level``: those
    matching category, backend and level first, then category and level on
    another backend of the same family, then the same two for one of the
    task's ``tags`` (what a fused task is made of: add_layernorm, category
    ``fusion``, has the tag ``norm``; queue round 5: its graph prompt had no
    exemplar, though the norm one is its pattern); with the task's
    ``intensity`` (FLOP per minimum byte at its nominal shape,
    :func:`intensity_of`), none whose ``min_intensity`` is above it."""
    family = backend.split("-")[0]
    ranked = []
    for e in all_exemplars():
        by_tag = category not in e.categories
        if (by_tag and not set(tags) & set(e.categories)) or level not in e.levels:
            continue
        if intensity is not None and intensity < e.min_intensity:
            continue
        if backend in e.backends:
            ranked.append((2 * by_tag, e))
        elif any(b.split("-")[0] == family for b in e.backends):
            ranked.append((2 * by_tag + 1, e))
    return [e for _, e in sorted(ranked, key=lambda x: x[0])][:k]


def intensity_of(task: Any) -> float | None:
    """FLOP per minimum byte of one call at ``task``'s nominal shape, from its
    work formulas; ``None`` without both (or when they do not evaluate)."""
    try:
        shape = task.full_shape(dict(task.nominal_shape))
        flops, nbytes = task.flops(shape), task.bytes(shape)
    except Exception:  # noqa: BLE001 - a formula that does not evaluate: no filter
        return None
    return float(flops) / float(nbytes) if flops and nbytes else None
