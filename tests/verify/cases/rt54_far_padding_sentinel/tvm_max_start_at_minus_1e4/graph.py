# kstrata-tvm graph
# inputs: 1
# params: 
# output: single
# fusion: none
# shape: symbolic
# build: symbolic
# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tir as T

s27 = TypeVar("s27")
s77 = TypeVar("s77")
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def row_max(var_x: T.handle, var_y: T.handle):
        n = T.int64()
        d = T.int64()
        x = T.match_buffer(var_x, (n, d), "float32")
        y = T.match_buffer(var_y, (n,), "float32")
        # BUG: the running maximum starts at -1e4 (a finite "minus infinity"), not -inf
        for i in range(n):
            y[i] = T.float32(-10000)
            for j in range(d):
                y[i] = T.max(y[i], x[i, j])

    @R.function
    def main(x: R.Tensor((s77, s27), dtype="float32")) -> R.Tuple(R.Tensor((s77,), dtype="float32")):
        R.func_attr({"tir_var_lower_bound": {"s27": 1, "s77": 1}})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.row_max, (x,), out_ty=R.Tensor((s77,), dtype="float32"))
            gv: R.Tuple(R.Tensor((s77,), dtype="float32")) = (lv,)
            R.output(gv)
        return gv
