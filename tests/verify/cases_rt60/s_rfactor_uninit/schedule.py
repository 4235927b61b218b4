# kstrata-tvm schedule: one `def schedule_<primfunc>(sch)` per scheduled PrimFunc


def schedule_fused_mean_add_tir_rsqrt_multiply_multiply1(sch):
    red = sch.get_sblock("lv_red")
    loops = sch.get_loops(red)
    ko, ki = sch.split(loops[-1], factors=[None, 8])
    rf = sch.rfactor(ki, factor_axis=1)
    row = sch.get_loops(rf)[0]
    sch.reverse_compute_at(red, row)
    sch.vectorize(sch.get_loops(rf)[-1])
    sch.parallel(row)
