from collections import Counter
from types import SimpleNamespace

import pytest

from kstrata.bench.sampling import stratified_sample
from kstrata.tasks.loader import suite


def _pool():
    # level 1: 3 categories (6, 2, 1 tasks); level 2: 2 categories (3, 3); level 3: 1 task
    spec = [(1, "a", 6), (1, "b", 2), (1, "c", 1), (2, "d", 3), (2, "e", 3), (3, "f", 1)]
    return [SimpleNamespace(name=f"{c}{i}", level=lv, category=c)
            for lv, c, n in spec for i in range(n)]


def test_balanced_over_levels_then_categories():
    got = stratified_sample(_pool(), 7, seed=3)
    levels = Counter(t.level for t in got)
    # level 3 has one task; the rest is split as evenly as possible
    assert levels == {1: 3, 2: 3, 3: 1}
    cats1 = Counter(t.category for t in got if t.level == 1)
    assert cats1 == {"a": 1, "b": 1, "c": 1}
    cats2 = Counter(t.category for t in got if t.level == 2)
    assert max(cats2.values()) - min(cats2.values()) <= 1
    assert len({t.name for t in got}) == 7


def test_deterministic_by_seed_and_exhaustive():
    pool = _pool()
    a = [t.name for t in stratified_sample(pool, 5, seed=1)]
    assert a == [t.name for t in stratified_sample(list(reversed(pool)), 5, seed=1)]
    assert any([t.name for t in stratified_sample(pool, 5, seed=s)] != a for s in range(2, 8))
    assert len(stratified_sample(pool, 100)) == len(pool)
    assert stratified_sample(pool, 0) == []
    with pytest.raises(ValueError):
        stratified_sample(pool, -1)


def test_suite_sample_spans_levels():
    got = stratified_sample(suite(), 6, seed=0)
    assert Counter(t.level for t in got) == {1: 2, 2: 2, 3: 2}
