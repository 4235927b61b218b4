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
        # four parts, part c summing the elements j = c mod 4 into part[c]; the last part's iteration adds the
        # other three parts as soon as its own is done: it reads elements the other iterations store (in order
        # on one thread; on several, they may not have stored them yet)
        for i in range(n):
            part = T.alloc_buffer((T.int64(4),), "float32")
            for c in T.parallel(T.int64(4)):
                part[c] = T.float32(0)
                for j in range((d - c + T.int64(3)) // T.int64(4)):
                    part[c] = part[c] + x[i, c + T.int64(4) * j]
                if c == T.int64(3):
                    y[i, T.int64(0)] = part[c]
                    for k in range(T.int64(3)):
                        y[i, T.int64(0)] = y[i, T.int64(0)] + part[k]

    @R.function
    def main(x: R.Tensor((s77, s27), dtype="float32")) -> R.Tuple(R.Tensor((s77, 1), dtype="float32")):
        R.func_attr({"tir_var_lower_bound": {"s27": 1, "s77": 1}})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.row_sum, (x,), out_ty=R.Tensor((s77, 1), dtype="float32"))
            gv: R.Tuple(R.Tensor((s77, 1), dtype="float32")) = (lv,)
            R.output(gv)
        return gv
