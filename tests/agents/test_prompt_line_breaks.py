"""Prompt templates keep each bullet on its own line (queue round rt56).

The template environment trims the newline after a block tag
(``trim_blocks``), so a line of text ending in ``{% endif %}`` runs into the
next line unless a blank line or a ``+%}`` tag keeps the break. The TVM graph
sheet's `# build:` bullet ran into the next one: "... costs a build per
shape).- `R.func_attr(...)` ...".
"""

from __future__ import annotations

import re

import pytest

from kstrata.agents.prompt import PROMPTS, api_sheet

#: a line of text (not a lone tag) that ends in a block tag trimming the newline after it
_TRIMMING_END = re.compile(r"\S.*\{%-?[^%]*[^+]%\}$")

BACKENDS = ("tvm-llvm", "tvm-opencl", "tvm-cuda", "triton", "triton-interp", "tilelang-c", "tilelang-cuda")
LEVELS = ("graph", "schedule", "source")


def _templates():
    return sorted(p for p in PROMPTS.rglob("*") if p.suffix in (".j2", ".md"))


@pytest.mark.parametrize("path", _templates(), ids=lambda p: str(p.relative_to(PROMPTS)))
def test_a_line_ending_in_a_block_tag_keeps_its_line_break(path):
    lines = path.read_text().splitlines()
    glued = [f"{path.name}:{i + 1}" for i, line in enumerate(lines[:-1])
             if _TRIMMING_END.match(line) and not line.lstrip().startswith("{%")
             and lines[i + 1].strip() and not lines[i + 1].lstrip().startswith("{%")]
    assert not glued, f"a text line ending in a block tag runs into the next line (add a blank line or +%}}): {glued}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("level", LEVELS)
def test_every_bullet_of_an_api_sheet_starts_a_line(backend, level):
    sheet = api_sheet(backend, level)
    for line in sheet.splitlines():
        assert not re.search(r"[.)]- [`A-Z]", line), f"two bullets on one line in the {backend} {level} sheet: {line}"
    if backend == "tvm-llvm" and level == "graph":
        assert re.search(r"^- `R\.func_attr\(", sheet, re.M), "the lower-bound bullet does not start a line"
