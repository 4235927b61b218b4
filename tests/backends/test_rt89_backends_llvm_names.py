"""LLVM's errors about a value's name in an edited IR say what the name rule is (queue round rt89: a source-level
answer added a second accumulator `%94b` beside `%94` and read only "LLVM rejected the IR: line 173, column 6:
expected '=' after instruction id (at `%94b = phi ...`)")."""

from __future__ import annotations

from kstrata.backends.tvm.build import llvm_diagnostic

PATH = "/tmp/x/source.ll"


def test_a_name_starting_with_a_digit_is_explained():
    msg = (f"{PATH}:173:6: error: expected '=' after instruction id\n"
           "  %94b = phi <16 x float> [ %124b, %for_body_c ], [ zeroinitializer, %for_body_c.preheader ]\n     ^\n")
    said = llvm_diagnostic(msg, PATH)
    assert said.startswith("line 173, column 6: expected '=' after instruction id (at `%94b = phi"), said
    assert "read as the numbered value %94" in said and "with a letter first" in said, said


def test_a_numbered_value_out_of_order_is_explained():
    msg = f"{PATH}:40:3: error: instruction expected to be numbered '%125'\n  %126 = fadd float %a, %b\n  ^\n"
    said = llvm_diagnostic(msg, PATH)
    assert "numbered 0, 1, 2, ... in the order they are defined" in said, said
    other = llvm_diagnostic(f"{PATH}:5:1: error: use of undefined value '%q'\n  ret float %q\n  ^\n", PATH)
    assert "letter first" not in other, other
