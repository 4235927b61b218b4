"""Parameter variants of a TileLang candidate: one-parameter moves of its
``schedule`` level (JSON overrides of the kernel's ``SCHEDULE``, see
:mod:`kstrata.backends.tilelang.backend`).

The choices are declared on the ``SCHEDULE`` line of the source, which is
read with regular expressions only (candidate text is never imported,
executed or parsed in kstrata's process)::

    SCHEDULE = {"block": 256, "threads": 1}  # kstrata-tune: block in {64, 128, 256, 512, 1024}; threads in {128, 256} on cuda

``on TARGET`` restricts a parameter to one target (``c`` or ``cuda``): on
TileLang's C target ``threads`` must stay 1, so thread counts are tuned on
GPUs only. A parameter's current value is the ``schedule`` level's, else the
integer literal ``"key": N`` on the ``SCHEDULE`` line.
"""

from __future__ import annotations

import json
import random
import re

from kstrata import jsontext

_LINE = re.compile(r"^SCHEDULE[ \t]*=(?P<dict>[^#\n]*)#[ \t]*kstrata-tune:[ \t]*(?P<spec>[^\n]+)$", re.M)
#: one ``key in {choices} [on target]`` item; a key starts at a word boundary and is taken whole
#: (``\b``, ``\w++``): from every position inside a 20 KB run of digits on a candidate's tune line the
#: pattern took 5 s in kstrata's process (quadratic; red team rt51), now linear
_ITEM = re.compile(r"\b(?P<key>\w++)[ \t]+in[ \t]+\{(?P<choices>[\d,\s]*+)\}(?:[ \t]+on[ \t]+(?P<target>\w+))?")


#: the syntax of the marker, for messages (README, "Tuning parameters")
SYNTAX = ("SCHEDULE = {\"block\": 256, \"threads\": 1}  # kstrata-tune: block in {64, 128, 256, 512}; "
          "threads in {128, 256} on cuda")


def malformed(source: str) -> list[str]:
    """A message per ``# kstrata-tune:`` marker of ``source`` that the tuner
    cannot read (found by regular expressions only): on another line than the
    one-line ``SCHEDULE = {...}``, or a choice not written ``KEY in {A, B, ...}``
    (integers; ``on c`` or ``on cuda`` after it; choices separated by ``;``),
    e.g. ``rpb = 1..16``. Each names the line number, the line and the syntax."""
    out = []
    for no, line in enumerate(source.splitlines(), 1):
        if not re.search(r"#[ \t]*kstrata-tune\b", line):
            continue
        m = _LINE.match(line)
        if m is None:
            out.append(f"line {no}: `{line.strip()[:120]}`: a `# kstrata-tune:` marker belongs at the end of the "
                       f"one-line `SCHEDULE = {{...}}` assignment, e.g. `{SYNTAX}`")
            continue
        bad = [part.strip() for part in m.group("spec").split(";")
               if part.strip() and not _ITEM.fullmatch(part.strip())]
        unknown = [item.group("key") for item in _ITEM.finditer(m.group("spec"))
                   if not re.search(rf"[\"']{re.escape(item.group('key'))}[\"']", m.group("dict"))]
        if bad:
            out.append(f"line {no}: cannot read {', '.join(f'`{b[:60]}`' for b in bad)} in `{line.strip()[:160]}`: "
                       "each choice is `KEY in {A, B, ...}` (integers, e.g. `rpb in {1, 2, 4, 8, 16}`), "
                       "optionally followed by `on c` or `on cuda`, choices separated by `;`")
        elif unknown:
            out.append(f"line {no}: {', '.join(f'`{k}`' for k in unknown)} is not a key of the SCHEDULE dict on "
                       f"that line (`{line.strip()[:160]}`); the tuner moves the dict's own keys")
    return out


def declared(source: str, target: str) -> dict[str, tuple[tuple[int, ...], int | None]]:
    """``{key: (choices, value on the SCHEDULE line or None)}`` of the marked
    parameters that apply to ``target`` (empty without a marked ``SCHEDULE`` line)."""
    m = _LINE.search(source)
    if m is None:
        return {}
    out = {}
    for item in _ITEM.finditer(m.group("spec")):
        if item.group("target") not in (None, target):
            continue
        key = item.group("key")
        choices = tuple(sorted({int(c) for c in re.findall(r"\d+", item.group("choices"))}))
        lit = re.search(rf"[\"']{re.escape(key)}[\"'][ \t]*:[ \t]*(\d+)", m.group("dict"))
        out[key] = (choices, int(lit.group(1)) if lit else None)
    return out


def schedule_variants(source: str, schedule: str, target: str, rng: random.Random | None = None,
                      limit: int | None = None) -> list[tuple[str, str, dict[str, int]]]:
    """One-parameter moves ``(new schedule JSON, description, {key: value})``:
    the neighbours of each parameter along its choices first, then those two
    places away; within a distance shuffled by ``rng``, interleaved by key.

    ``schedule`` is the candidate's schedule level (a JSON object, possibly
    empty); a malformed one yields no moves (the candidate does not load anyway).
    """
    try:
        current = jsontext.loads(schedule) if schedule.strip() else {}
    except ValueError:
        return []
    if not isinstance(current, dict):
        return []
    rng = rng or random.Random(0)
    params = declared(source, target)
    out: list[tuple[str, str, dict[str, int]]] = []
    for d in (1, 2):
        by_key: dict[str, list[tuple[str, str, dict[str, int]]]] = {}
        for key, (choices, literal) in params.items():
            value = current.get(key, literal)
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            ladder = tuple(sorted({*choices, value}))
            i = ladder.index(value)
            for j in (i - d, i + d):
                if 0 <= j < len(ladder):
                    new = {**current, key: ladder[j]}
                    by_key.setdefault(key, []).append(
                        (json.dumps(new, sort_keys=True), f"{key} {value} -> {ladder[j]}", {key: ladder[j]}))
        keys = sorted(by_key)
        rng.shuffle(keys)
        while any(by_key.values()):
            for key in keys:
                if by_key[key]:
                    out.append(by_key[key].pop(0))
    return out[:limit] if limit is not None else out
