"""Red team rt77: a process forked in a zygote that this candidate's hidden tests marked (rt68) gets what
they left in the sandbox's shared state, so its failures' details must be withheld as for a process started
from a marked kernel-cache archive. restored_hidden was set from the archive alone, and a candidate that
caches nothing (any pytorch candidate) has none: its next process of the same key forked in the marked
zygote with restored_hidden False. Case: tests/sandbox/cases/rt77_marked_zygote_no_archive."""

from __future__ import annotations

import uuid

import pytest

from kstrata.sandbox import status

pytestmark = pytest.mark.usefixtures("keep_idle_processes")

sandboxed = pytest.mark.skipif(not status().usable, reason="no sandbox here")


@sandboxed
def test_a_process_forked_where_its_hidden_tests_ran_has_its_details_withheld():
    from kstrata.backends.registry import get_backend
    from kstrata.sandbox import CandidateProcess, client
    from kstrata.sandbox.client import sandbox_env
    from kstrata.sandbox.kernel_cache import candidate_key, open_archive

    key = candidate_key("pytorch", {"source": f"# rt77 {uuid.uuid4()}\n"}, "verify", "task-digest")

    def proc():
        return CandidateProcess("pytorch", env=sandbox_env(get_backend("pytorch")), memory_mb=4096,
                                kernel_cache=key)

    client.close_zygotes()  # an idle list left full by earlier tests in this process ends marked zygotes first
    first = proc().start()
    marked = first.zygote
    first.saw_hidden = True  # its hidden tests ran here
    first.close()
    try:
        assert marked.hidden_of == key and open_archive(key) is None  # marked; nothing cached, no archive
        again = proc().start()  # the same candidate's next verification (a full-scope confirmation)
        try:
            assert again.zygote is marked
            assert again.restored_hidden, "forked where its hidden tests ran, details not withheld"
        finally:
            again.close()
        fresh = CandidateProcess("pytorch", env=sandbox_env(get_backend("pytorch")), memory_mb=4096,
                                 kernel_cache=candidate_key("pytorch", {"source": "# other\n"}, "verify", "t"))
        fresh.start()
        try:
            assert fresh.zygote is not marked and not fresh.restored_hidden
        finally:
            fresh.close()
    finally:
        client.close_zygotes()
