# Reader (appended to common.py by run.py): the bits back, as its load error (what an agent reads).
got = sum(cached(i) << i for i in range(BITS))
raise RuntimeError(f"READ {got:#06x}")
