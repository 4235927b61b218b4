# kstrata-tvm graph
# inputs: 1
# params: packed, scales
# output: single
# fusion: ops+tir
# shape: symbolic
# build: symbolic
# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

s41 = TypeVar("s41")
s67 = TypeVar("s67")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def w4_gemv(var_x: T.handle, var_p: T.handle, var_s: T.handle, var_y: T.handle):
        n, k, kh, g = T.int64(), T.int64(), T.int64(), T.int64()
        x = T.match_buffer(var_x, (T.int64(1), k), "float16")
        packed = T.match_buffer(var_p, (n, kh), "uint8")
        scales = T.match_buffer(var_s, (n, g), "float16")
        y = T.match_buffer(var_y, (T.int64(1), n), "float16")
        for i in T.parallel(n):
            with T.sblock("row"):
                vi = T.axis.spatial(n, i)
                T.reads(x[0, 0:k], packed[vi, 0:kh], scales[vi, 0:g])
                T.writes(y[0, vi])
                acc = T.float32(0)
                for c in range(kh):
                    b = T.bind(packed[vi, c])
                    hi = T.bind(T.Cast("float32", b & T.uint8(15)) - T.float32(8))
                    lo = T.bind(T.Cast("float32", b >> T.uint8(4)) - T.float32(8))
                    s = T.bind(T.Cast("float32", scales[vi, c // T.int64(64)]))
                    acc = acc + (T.Cast("float32", x[0, c * 2]) * lo + T.Cast("float32", x[0, c * 2 + 1]) * hi) * s
                y[0, vi] = T.Cast("float16", acc)

    @R.function
    def main(x: R.Tensor((1, "128 * s67"), dtype="float16"), p_packed: R.Tensor((s41, "64 * s67"), dtype="uint8"), p_scales: R.Tensor((s41, s67), dtype="float16")) -> R.Tuple(R.Tensor((1, s41), dtype="float16")):
        R.func_attr({"tir_var_lower_bound": {"s41": 1, "s67": 1}})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.w4_gemv, (x, p_packed, p_scales), out_ty=R.Tensor((1, s41), dtype="float16"))
            gv: R.Tuple(R.Tensor((1, s41), dtype="float16")) = (lv,)
            R.output(gv)
        return gv
