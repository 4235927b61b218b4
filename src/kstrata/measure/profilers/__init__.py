"""Hardware profilers turned into plain-word findings.

``ncu`` (Nsight Compute) on NVIDIA GPUs, ``perf stat`` on CPU where the kernel
exposes hardware counters, and roofline-only findings everywhere else; see
:func:`kstrata.measure.profilers.findings.findings`.
"""
