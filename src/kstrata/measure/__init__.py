"""kstrata.measure: the one timer, baselines, roofline and profiler findings.

* :mod:`.timing` — :func:`~.timing.measure` (paired A B A B timing, cache flush,
  rotating inputs, adaptive repetitions, re-measure when noisy) returning a
  JSON-serializable :class:`~.timing.Measurement`; :class:`~.timing.TimingConfig`.
* :mod:`.stats` — order statistics and the bootstrap CI of a paired speedup.
* :mod:`.cache_flush` — LLC size from sysfs, the flush buffer (CPU and GPU).
* :mod:`.candidate` — :func:`~.candidate.time_candidate`, the worker function
  that builds a candidate and its baseline and times them.
* :mod:`.baselines` — eager, ``torch.compile`` and MetaSchedule baselines, cached.
* :mod:`.roofline` — the machine's measured ceilings (cached) and
  :func:`~.roofline.analyze`.
* :mod:`.profilers` — ``ncu`` and ``perf stat`` adapters and
  :func:`~.profilers.findings.findings`.
* :mod:`.environment` — versions and clock-sensitive settings recorded with
  every measurement; fixing the thread count.
"""
