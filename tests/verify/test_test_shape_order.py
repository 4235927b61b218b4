"""A test's shape is shown in the task's own order (agents queue round rt58:
a prompt read "the public test at K=128, N=64" for a task written N, K, since
a test's shape key is sorted); the order is not part of the test's identity,
so the hidden draws and their seeds do not change."""

from __future__ import annotations

from dataclasses import replace

from kstrata.agents.run_history import failing_test
from kstrata.tasks.loader import resolve_task
from kstrata.verify import plan


def test_public_and_hidden_tests_show_the_task_order_and_keep_their_identity():
    task = resolve_task("matmul_tall_skinny")
    order = list(task.nominal_shape)
    assert order != sorted(order)  # the case needs a task whose order is not alphabetical
    tests = plan.public_tests(task) + plan.hidden_tests(task, "secret")
    for t in tests:
        assert list(t.describe()["shape"]) == [k for k in order if k in t.shape_dict]
        assert [k for k, _ in t.shape] == sorted(t.shape_dict)  # the key stays sorted
        bare = replace(t, order=())
        assert bare == t and hash(bare) == hash(t) and list(bare.shape_dict) == sorted(t.shape_dict)


def test_the_prompt_names_a_failing_public_test_in_the_task_order():
    task = resolve_task("matmul_tall_skinny")
    t = plan.public_tests(task)[0]
    text = failing_test({"stage": "public", "test": t.describe()})
    shape = t.shape_dict
    assert f"at {', '.join(f'{k}={shape[k]}' for k in task.nominal_shape)} (" in text, text
