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
        # one block per row, two threads per block: each thread sums its part of the row (the first element, and
        # the rest) and adds it into y[i] with a plain read and write. The two threads of a block race on y[i]
        # (a lost update when both add at once) on a GPU; an OpenCL CPU driver runs a work-group's work-items one
        # after another, where no add is lost
        for i in T.thread_binding(n, thread="blockIdx.x"):
            for t in T.thread_binding(T.int64(2), thread="threadIdx.x"):
                acc = T.alloc_buffer((T.int64(1),), "float32", scope="local")
                acc[T.int64(0)] = T.float32(0)
                for j in range(T.if_then_else(t == T.int64(0), T.int64(1), d - T.int64(1))):
                    acc[T.int64(0)] = acc[T.int64(0)] + x[i, t + j]
                if t == T.int64(0):
                    y[i, T.int64(0)] = T.float32(0)
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
