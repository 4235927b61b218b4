"""Prompt assembly from templates, and the whole propose -> parse -> sources path."""

from __future__ import annotations

import os
import threading

import pytest

from kstrata.agents.parse import ParseError, answer_to_sources
from kstrata.agents.prompt import (
    Feedback,
    PromptContext,
    TaskContract,
    build_prompt,
    integrity_rules,
    retry_messages,
)
from kstrata.config import ProviderConfig
from kstrata.llm import CallLog, ProviderSpec
from kstrata.tasks.loader import resolve_task

SCHEDULE = "def schedule_main(sch):\n    b = sch.get_block('compute')\n    sch.parallel(sch.get_loops(b)[0])\n"
FEEDBACK = {
    "verdict": "incorrect",
    "check": "tolerance",
    "evaluation": [{"kind": "tail_tile", "level": "schedule", "text": "only the last partial tile is wrong",
                    "data": {"dim": 1}}],
    "measurement": {"median_ms": 2.5, "speedups": [{"baseline": "eager", "value": 1.7}],
                    "roofline_fraction": 0.4, "bound": "memory", "findings": ["vector units idle"]},
}


def context(role="single", level="schedule", **kw):
    task = resolve_task("gelu")
    kw.setdefault("feedback", Feedback.from_json(FEEDBACK))
    return PromptContext(
        task=TaskContract.from_task(task), backend="tvm-llvm", level=level, role=role,
        sources={"graph": "# graph\n" + "x = 1\n" * 200, "schedule": SCHEDULE},
        hardware={"name": "x86-avx2", "kind": "cpu", "vector_bits": 256, "source": "a datasheet"},
        **kw,
    )


@pytest.mark.parametrize("role, level", [("single", "graph"), ("single", "schedule"),
                                         ("single", "source"), ("graph", "graph"),
                                         ("schedule", "schedule"), ("source", "source")])
def test_every_role_renders_the_required_sections(role, level):
    system, user = build_prompt(context(role, level))
    assert system["role"] == "system" and user["role"] == "user"
    s, u = system["content"], user["content"]
    assert "x86-avx2" in s and "<<<<<<< SEARCH" in s and "no_exception_fallback" in s
    assert f"source of the {level} level" in s
    for needle in ("# Task: gelu", "def forward", "B=8, D=512", "B=4096, D=4096", "float32",
                   "float64 oracle", "vector_bits: 256", "only the last partial tile is wrong",
                   "2.5 ms", "vs eager: 1.7x", "40.0% of the attainable peak, memory-bound",
                   "profiler: vector units idle", "# What you may change", f"The {level} level"):
        assert needle in u, needle
    assert "a datasheet" not in u  # the spec's citation is not prompt material
    if level != "graph":
        assert "lines omitted" in u  # the long graph level is summarized


def test_hidden_data_stays_out():
    _, user = build_prompt(context())
    u = user["content"]
    assert "KSTRATA" not in u and "65537" not in u and "4099" not in u  # sweep shapes
    assert "B=5, D=77" in u  # public ones are there


def test_context_rejects_raw_data_and_mismatches():
    ctx = context()
    with pytest.raises(TypeError, match="TaskContract"):
        PromptContext(task={"name": "x"}, backend="b", level="schedule", sources={})
    with pytest.raises(TypeError, match="Feedback"):
        PromptContext(task=ctx.task, backend="b", level="schedule", sources={}, feedback=FEEDBACK)
    with pytest.raises(ValueError, match="graph agent edits the graph level"):
        PromptContext(task=ctx.task, backend="b", level="schedule", sources={}, role="graph")


def test_starting_candidate_and_empty_level():
    ctx = context(level="source", feedback=Feedback())
    _, user = build_prompt(ctx)
    assert "none yet (this is the starting candidate)" in user["content"]
    assert "this level has no source yet" in user["content"]


def test_rules_follow_the_verifier_registry():
    rules = integrity_rules("tvm-llvm")
    assert any(r.startswith("no_caching:") for r in rules)
    assert not any(r.startswith("no_torch_compute") for r in integrity_rules("pytorch"))


def test_retry_messages_carry_the_parse_feedback():
    msgs = build_prompt(context())
    with pytest.raises(ParseError) as e:
        answer_to_sources("I would vectorize.", {"schedule": SCHEDULE}, "schedule")
    out = retry_messages(msgs, "I would vectorize.", e.value.feedback, "schedule")
    assert out[:2] == msgs and out[2] == {"role": "assistant", "content": "I would vectorize."}
    assert "contains no code block" in out[3]["content"] and out[3]["role"] == "user"


def test_propose_parse_sources_through_openai(api, keys):
    """The optimizer's path: prompt -> provider -> parse; a malformed answer is
    sent back as feedback and the retry is a counted call."""
    cfg = ProviderConfig(kind="openai", model="fake-model", base_url=api.root + "/v1")
    log = CallLog()
    provider = ProviderSpec("openai", "fake-model", cfg).build(accounting=log)
    good = ("Vectorize the inner loop.\n<<<<<<< SEARCH\n    sch.parallel(sch.get_loops(b)[0])\n"
            "=======\n    i, j = sch.get_loops(b)\n    sch.parallel(i)\n    sch.vectorize(j)\n"
            ">>>>>>> REPLACE\n")
    api.script = [("ok", "```python\ndef schedule_main(sch):\n"), ("ok", good)]
    ctx = context()
    messages = build_prompt(ctx)
    c = provider.complete(messages)
    with pytest.raises(ParseError) as e:
        answer_to_sources(c.text, ctx.sources, ctx.level, finish_reason=c.raw_finish_reason)
    assert e.value.kind == "truncated"
    c = provider.complete(retry_messages(messages, c.text, e.value.feedback, ctx.level))
    sources, parsed = answer_to_sources(c.text, ctx.sources, ctx.level, finish_reason=c.raw_finish_reason)
    assert sources["graph"] == ctx.sources["graph"]
    assert "sch.vectorize(j)" in sources["schedule"] and parsed.rationale == "Vectorize the inner loop."
    calls = log.take()
    assert len(calls) == 2 and calls[1].prompt.count("<!-- kstrata: role=") == 4
    assert calls[1].response == good and calls[1].tokens_in > calls[0].tokens_in


def test_propose_through_the_queue(tmp_path):
    """A helper thread plays the person in the loop, answering the prompt file."""
    provider = ProviderSpec.parse(f"queue:{tmp_path / 'q'}").build()
    provider.poll_s = 0.02
    ctx = context()
    stop = threading.Event()

    def person():
        while not stop.is_set():
            for p in provider.directory.glob("*.prompt.md"):
                answer = p.with_name(p.name.replace(".prompt.md", ".response.md"))
                if not answer.exists() and "# What you may change" in p.read_text():
                    # the protocol's way: a temporary name, renamed into place (read at once; written in
                    # place, the answer would wait the 5 s settle)
                    tmp = answer.with_name(f".{answer.name}.tmp")
                    tmp.write_text("Unroll.\n```python\n" + SCHEDULE + "    sch.unroll(i)\n```\n")
                    os.replace(tmp, answer)
            stop.wait(0.02)

    threading.Thread(target=person, daemon=True).start()
    try:
        c = provider.complete(build_prompt(ctx))
    finally:
        stop.set()
    sources, parsed = answer_to_sources(c.text, ctx.sources, ctx.level, language=ctx.language)
    assert parsed.mode == "full" and sources["schedule"].endswith("sch.unroll(i)\n")
