"""What the tvm-llvm source prompt says about editing LLVM IR (queue round
rt58: a source agent given 1165 lines of TVM's optimized IR was not told that
an edited .ll is compiled without IR optimization passes, that
`@llvm.exp.v8f32` is eight scalar `expf` calls, nor where a PrimFunc's loops
are). The facts are checked here against the installed TVM, as the sheet
states them."""

from __future__ import annotations

import re

from kstrata.agents.prompt import api_sheet

SCALAR_SUM = """target triple = "x86_64-unknown-linux-gnu"
define float @sum(ptr %x, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %s = phi float [ 0.0, %entry ], [ %s1, %loop ]
  %p = getelementptr float, ptr %x, i64 %i
  %v = load float, ptr %p, align 4
  %s1 = fadd reassoc float %s, %v
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp eq i64 %i1, %n
  br i1 %c, label %exit, label %loop
exit:
  ret float %s1
}
define <8 x float> @ev(<8 x float> %a) {
  %r = call reassoc <8 x float> @llvm.exp.v8f32(<8 x float> %a)
  ret <8 x float> %r
}
declare <8 x float> @llvm.exp.v8f32(<8 x float>)
"""


def test_the_llvm_source_sheet_says_how_edited_ir_is_compiled():
    sheet = api_sheet("tvm-llvm", "source")
    assert "no IR optimization passes" in sheet and "`@llvm.exp.v8f32` become calls of libm's `expf`" in sheet
    assert "@<primfunc>_compute_" in sheet and "@__tvm_parallel_lambda" in sheet
    assert "no IR optimization passes" not in api_sheet("tvm-cuda", "source")


def test_the_sheets_facts_hold_for_the_installed_tvm(tmp_path):
    import tvm

    path = tmp_path / "k.ll"
    path.write_text(SCALAR_SUM)
    asm = tvm.runtime.load_module(str(path)).inspect_source("asm")
    body = asm.split("sum:", 1)[1].split("ev:", 1)[0]
    assert "vaddss" in body or "addss" in body, body  # the reassociable loop stays scalar
    assert not re.search(r"\badd[p]s\b|vaddps", body), body
    assert asm.count("expf") == 8, asm  # one libm call per lane
