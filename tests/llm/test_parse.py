"""Parsing model answers: whole blocks, SEARCH/REPLACE edits, malformed answers."""

from __future__ import annotations

import pytest

from kstrata.agents.parse import ParseError, answer_to_sources, apply_edits, Edit, parse_answer

CURRENT = """def schedule_main(sch):
    b = sch.get_block("compute")
    i, j = sch.get_loops(b)
    sch.parallel(i)
"""


def edit(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def test_whole_block_with_rationale():
    text = "Vectorize the inner loop.\n\n```python\n" + CURRENT + "    sch.vectorize(j)\n```\n"
    parsed = parse_answer(text, CURRENT, language="python")
    assert parsed.mode == "full" and parsed.source.endswith("sch.vectorize(j)\n")
    assert parsed.rationale == "Vectorize the inner loop."


def test_non_code_blocks_are_ignored():
    text = "Run:\n```bash\nkstrata eval x\n```\n```python\nnew = 1\n```\n"
    assert parse_answer(text, CURRENT, language="python").source == "new = 1\n"


def test_identical_repeated_blocks_are_not_a_conflict():
    text = "```python\nnew = 1\n```\nAgain:\n```python\nnew = 1\n```\n"
    assert parse_answer(text, CURRENT).source == "new = 1\n"


def test_search_replace_edits_applied_in_order():
    text = (
        "Split then vectorize.\n```python\n"
        + edit("    sch.parallel(i)\n", "    sch.parallel(i)\n    sch.vectorize(j)\n")
        + edit("    i, j = sch.get_loops(b)\n", "    i, j = sch.get_loops(b)  # 2-D\n")
        + "```\n"
    )
    sources, parsed = answer_to_sources(text, {"graph": "G", "schedule": CURRENT}, "schedule")
    assert parsed.mode == "edits" and len(parsed.edits) == 2
    assert sources["graph"] == "G"
    assert sources["schedule"] == CURRENT.replace(
        "    i, j = sch.get_loops(b)\n", "    i, j = sch.get_loops(b)  # 2-D\n"
    ) + "    sch.vectorize(j)\n"
    assert parsed.rationale == "Split then vectorize."


def test_edit_forgives_trailing_space_and_uniform_indent():
    # the model dropped the 4-space indentation and added a trailing space
    out = apply_edits(CURRENT, [Edit("sch.parallel(i) \n", "sch.parallel(j)\nsch.unroll(i)\n")])
    assert out.endswith("    sch.parallel(j)\n    sch.unroll(i)\n")


@pytest.mark.parametrize(
    "text, finish, kind, words",
    [
        ("I would tile the loops.", None, "no_code", "no code block"),
        ("```python\na = 1\n```\n```python\na = 2\n```", None, "conflicting_blocks", "2 different"),
        ("```python\ndef f():\n    return 1\n", None, "truncated", "never closed"),
        ("```python\na = 1\n```", "length", "truncated", "token limit"),
        ("```python\na = 1\n```", "max_tokens", "truncated", "token limit"),
        (edit("    sch.unroll(k)\n", "x\n"), None, "edit_no_match", "does not occur"),
        ("<<<<<<< SEARCH\n    sch.parallel(i)\n=======\n    sch.unroll(i)\n", None, "truncated",
         "not closed"),
        ("=======\nfoo\n>>>>>>> REPLACE\n", None, "malformed_edit", "without"),
        (edit("", "x = 1\n"), None, "malformed_edit", "empty SEARCH"),
        ("```python\n" + CURRENT + "```", None, "unchanged", "identical"),
    ],
)
def test_malformed_answers_give_retry_feedback(text, finish, kind, words):
    with pytest.raises(ParseError) as e:
        parse_answer(text, CURRENT, finish_reason=finish)
    assert e.value.kind == kind
    assert words in str(e.value)
    assert e.value.feedback.startswith("Your previous answer could not be used:")
    assert "<<<<<<< SEARCH" in e.value.feedback  # the format is restated


def test_no_match_feedback_shows_closest_lines():
    with pytest.raises(ParseError) as e:
        parse_answer(edit("    sch.parallel(ii)\n", "    sch.parallel(i)\n"), CURRENT)
    assert "line 4" in e.value.feedback and "sch.parallel(i)" in e.value.feedback


def test_ambiguous_edit():
    src = "x = 1\ny = 2\nx = 1\n"
    with pytest.raises(ParseError, match="occurs 2 times") as e:
        parse_answer(edit("x = 1\n", "x = 3\n"), src)
    assert e.value.kind == "edit_ambiguous"


def test_edit_on_empty_level_creates_it():
    parsed = parse_answer(edit("", "x = 1\n"), "")
    assert parsed.source == "x = 1\n"
