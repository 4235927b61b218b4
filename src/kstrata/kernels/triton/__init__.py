"""Initial Triton candidates (data files, one per suite task)."""
