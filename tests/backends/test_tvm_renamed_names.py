"""A graph's TVMScript written with a name TVM 0.27 renamed says the new one
(newcomer nc23: `T.block` failed with "module 'tvm.tirx.script.parser' has no
attribute 'block'", then `out_sinfo=` with "call_tir() got an unexpected keyword
argument 'out_sinfo'", each a minute's eval; the new names were only in the LLM's
API sheet)."""

from __future__ import annotations

import pytest

tvm = pytest.importorskip("tvm")

MODULE = '''
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.sblock("b"):
                vi = T.axis.spatial(4, i)
                y[vi] = x[vi]

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")):
        cls = Module
        lv = R.call_tir(cls.f, (x,), out_ty=R.Tensor((4,), dtype="float32"))
        return lv
'''


@pytest.mark.parametrize("old, new, said", [
    ("T.sblock", "T.block", "renamed `T.block` to `T.sblock`"),
    ("out_ty=", "out_sinfo=", "renamed `R.call_tir`'s `out_sinfo=` to `out_ty=`"),
])
def test_a_renamed_tvmscript_name_is_told_by_its_new_name(old, new, said):
    from kstrata.backends.tvm.lower import parse_error_text

    tvm.script.from_source(MODULE)  # the module as written for TVM 0.27 parses
    with pytest.raises(Exception) as caught:
        tvm.script.from_source(MODULE.replace(old, new))
    text = parse_error_text(caught.value)
    assert said in text, text
    assert text.startswith("error: "), text  # TVM's own first line comes first


def test_another_parse_error_gets_no_renaming_note():
    from kstrata.backends.tvm.lower import parse_error_text

    with pytest.raises(Exception) as caught:
        tvm.script.from_source(MODULE.replace("T.axis.spatial", "T.axis.nosuch"))
    assert "renamed" not in parse_error_text(caught.value)
