# kstrata-tvm schedule: one `def schedule_<primfunc>(sch)` per scheduled PrimFunc


def schedule_row_sum(sch):
    pass  # bound by hand in the graph
