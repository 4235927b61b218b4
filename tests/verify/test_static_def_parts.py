"""The static checks read a function's defaults and annotations, and a dtype
named as text (queue round rt58: a TileLang float16 accumulator on a float32
task went unflagged where Triton's ``tl.float16`` was; a default value was read
by no check at all)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kstrata
from kstrata.tasks.loader import resolve_task
from kstrata.verify.integrity.static import static_findings

KERNELS = Path(kstrata.__file__).parent / "kernels"

TILELANG_FP16_SUM = '''
import tilelang.language as T

def row_sum(M, N, accum="float16"):
    @T.prim_func
    def f(A: T.Tensor((M, N), "float32"), Out: T.Tensor((M,), "float32")):
        with T.Kernel(M) as bx:
            s = T.alloc_fragment((1,), accum)
    return f
'''


def checks(src: str, **kw) -> set[str]:
    return {f.check for f in static_findings(src, dsl=True, **kw)}


def test_a_dtype_named_as_text_is_a_precision_downgrade_on_a_float32_task():
    assert "no_precision_downgrade" in checks(TILELANG_FP16_SUM)
    inline = TILELANG_FP16_SUM.replace('accum="float16"', 'accum="float32"').replace('(1,), accum)', '(1,), "bf16")')
    assert "no_precision_downgrade" in checks(inline)
    assert "no_precision_downgrade" not in checks(TILELANG_FP16_SUM.replace('"float16"', '"float32"'))
    assert "no_precision_downgrade" not in checks(TILELANG_FP16_SUM, dtype="float16")
    assert "no_precision_downgrade" not in checks(TILELANG_FP16_SUM, allow_reduced_precision=True)


@pytest.mark.parametrize("src, check", [
    ('def f(x, m=__import__("os")):\n    return m\n', "no_introspection"),
    ('import torch\ndef f(x, g=torch._C):\n    return g\n', "no_private_api"),
    ('import torch\ndef f(x) -> torch._C.Graph:\n    return x\n', "no_private_api"),
    ('import torch\ndef f(x: torch._C.Value):\n    return x\n', "no_private_api"),
])
def test_defaults_and_annotations_are_read(src: str, check: str):
    assert check in checks(src)


@pytest.mark.parametrize("path", sorted(KERNELS.rglob("*.py")), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_shipped_kernels_name_no_reduced_dtype_on_their_task(path: Path):
    if path.name == "__init__.py":
        pytest.skip("package marker")
    task = resolve_task(path.stem)
    found = [f for f in static_findings(path.read_text(), dsl=True, dtype=task.meta.dtype,
                                        allow_tf32=task.meta.precision.allow_tf32,
                                        allow_reduced_precision=task.meta.precision.allow_reduced_precision)
             if f.check == "no_precision_downgrade"]
    assert not found, found
