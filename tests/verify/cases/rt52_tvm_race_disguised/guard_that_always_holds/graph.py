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
    def row_sum(var_x: T.handle, var_y: T.handle):
        n = T.int64()
        d = T.int64()
        x = T.match_buffer(var_x, (n, d), "float32")
        y = T.match_buffer(var_y, (n, T.int64(1)), "float32")
        # the add into y[i] sits under `if c < 2`, which names c but holds for both iterations
        for i in range(n):
            y[i, T.int64(0)] = T.float32(0)
            for c in T.parallel(T.int64(2)):
                acc = T.alloc_buffer((T.int64(1),), "float32", scope="local")
                acc[T.int64(0)] = T.float32(0)
                for j in range(T.if_then_else(c == T.int64(0), T.int64(1), d - T.int64(1))):
                    acc[T.int64(0)] = acc[T.int64(0)] + x[i, c + j]
                if c < T.int64(2):
                    y[i, T.int64(0)] = y[i, T.int64(0)] + acc[T.int64(0)]

    @R.function
    def main(x: R.Tensor((s77, s27), dtype="float32")) -> R.Tuple(R.Tensor((s77, 1), dtype="float32")):
        R.func_attr({"tir_var_lower_bound": {"s27": 1, "s77": 1}})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.row_sum, (x,), out_ty=R.Tensor((s77, 1), dtype="float32"))
            gv: R.Tuple(R.Tensor((s77, 1), dtype="float32")) = (lv,)
            R.output(gv)
        return gv
