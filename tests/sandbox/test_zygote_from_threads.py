"""A sandbox started from a thread that then ends lives on (bubblewrap's
--die-with-parent is PR_SET_PDEATHSIG, which fires when the forking *thread*
ends): two zygotes started side by side from short-lived threads stay usable,
as kstrata.verify.warm_loads starts them."""

from __future__ import annotations

import threading
import time

from kstrata.backends.registry import get_backend
from kstrata.sandbox.client import fresh
from kstrata.tasks.loader import resolve_task
from kstrata.verify import runner


def test_zygotes_started_from_ended_threads_still_fork():
    backend, task = get_backend("pytorch"), resolve_task("relu")
    sources = backend.initial_sources(task)
    procs = []

    def start() -> None:
        procs.append(fresh(runner.candidate_process(task, backend, False, sources)))

    threads = [threading.Thread(target=start) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(1.0)  # the threads have ended: a parent-death signal would have come by now
    assert len(procs) == 2
    try:
        assert [p.zygote.proc.poll() for p in procs] == [None, None]
        for p in procs:
            assert p.ok({"op": "noop"})[0].get("ok")
    finally:
        zygotes = [p.zygote for p in procs]
        for p in procs:
            p.close()
    # given back idle, and a fresh candidate process can be forked from them
    assert all(z.alive() for z in zygotes)
    again = fresh(runner.candidate_process(task, backend, False, sources))
    try:
        assert again.zygote in zygotes
    finally:
        again.close()
