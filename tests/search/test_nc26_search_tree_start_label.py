"""``kstrata tree`` names the run's start once (newcomer nc26): its line read ``0bda6bdf initial
initial correct`` (no level edited, shown as ``initial``, then its role, also ``initial``); an
edit keeps ``level role`` (``source triton-tune``)."""

from kstrata.search.tree import CandidateTree
from kstrata.search.views import node_label
from kstrata.store.records import CandidateRecord


def test_the_start_is_called_initial_once_and_an_edit_keeps_level_and_role():
    start = CandidateRecord(hash="0bda6bdf" + "0" * 56, sources={"source": "x"}, level=None, role="initial",
                            proposer="initial")
    edit = CandidateRecord(hash="49a9ef6f" + "0" * 56, sources={"source": "y"}, level="source",
                           role="triton-tune", proposer="builtin", parents=(start.hash,))
    tree = CandidateTree([start, edit])
    assert node_label(tree, tree[start.hash]).plain.startswith("0bda6bdf initial not evaluated")
    assert node_label(tree, tree[edit.hash]).plain.startswith("49a9ef6f source triton-tune ")
