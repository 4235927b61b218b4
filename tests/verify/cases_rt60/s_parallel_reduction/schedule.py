# kstrata-tvm schedule: one `def schedule_<primfunc>(sch)` per scheduled PrimFunc


def schedule_fused_mean_add_tir_rsqrt_multiply_multiply1(sch):
    red = sch.get_sblock("lv_red")
    loops = sch.get_loops(red)
    ko, ki = sch.split(loops[-1], factors=[4, None])
    sch.reorder(ko, loops[0])
    sch.parallel(ko)
