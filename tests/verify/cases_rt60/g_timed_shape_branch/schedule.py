# kstrata-tvm schedule: one `def schedule_<primfunc>(sch)` per scheduled PrimFunc


def schedule(sch):
    pass
