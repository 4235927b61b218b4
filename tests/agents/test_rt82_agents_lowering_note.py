"""Queue round rt82: when kstrata's own sandboxed lowering fails (its zygote exited with a traceback), the
schedule/graph prompt's PrimFunc note said "(the graph does not lower: sandboxed process did not start: the
sandbox's zygote exited: Traceback (most recent call last):)" about the task's shipped graph: a finding about
the graph, wrong, and cut before the error. The note now says it is kstrata's failure and names the exception.
"""

from __future__ import annotations

import pytest

from kstrata.backends.tvm import isolated
from kstrata.sandbox import IsolatedCallError
from kstrata.tasks.loader import resolve_task

CRASH = ("sandboxed process did not start: the sandbox's zygote exited: Traceback (most recent call last):\n"
         '  File "<frozen runpy>", line 198, in _run_module_as_main\n'
         '  File "/work/main/src/kstrata/sandbox/child.py", line 235, in __init__\n'
         "    self.staged: list[list[Any]] = []\n"
         "AttributeError: 'Harness' object has no attribute 'staged'\n")


def test_a_failed_lowering_process_is_told_as_kstratas_failure_with_its_exception(monkeypatch: pytest.MonkeyPatch):
    def crashed(*args, **kwargs):
        raise IsolatedCallError(CRASH)

    monkeypatch.setattr(isolated, "_call", crashed)
    note = isolated.primfunc_context(resolve_task("softmax"), {"graph": "# rt82: not cached\n"}, "tvm-llvm")
    assert "does not lower" not in note and "kstrata's failure, not a finding about the graph" in note, note
    assert "AttributeError: 'Harness' object has no attribute 'staged'" in note, note
    assert "the sandbox's zygote exited" in note and "Traceback" not in note, note


def test_a_plain_error_keeps_its_first_line():
    assert isolated._first_line("ValueError: bad graph\nmore detail") == "ValueError: bad graph"
    assert isolated._first_line("  \n") == "no message"
