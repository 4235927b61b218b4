"""An LLM search spends its budget while an agent has something to do, and
says why when it stops early (queue round: six of seven runs stopped with
"policy exhausted" after 2-4 of 5-6 evaluations, every level of every
candidate closed by the rules that guess a model would repeat itself)."""

from __future__ import annotations

from agent_fakes import Log, LoggedProvider

from kstrata.agents.llm_agent import REPEAT_NOTE, LLMProposer
from kstrata.search.budget import Budget
from kstrata.search.loop import optimize
from kstrata.store.run_store import RunStore
from kstrata.tasks.loader import resolve_task

DECLINE = "DECLINE\nDIAGNOSIS: nothing more to do: one pass over the row already."


class Interp:
    """triton-interp as the loop and the agents see it: one level, nothing timed."""

    name, levels, timing_meaningful = "triton-interp", ("source",), False

    def level_context(self, task, sources, level):
        return {}

    def initial_sources(self, task):
        return {"source": "import triton\n# start\n"}


class Correct:
    def evaluate(self, task, backend, sources):
        return {"verdict": "correct", "feedback": []}, None


def edit(n: int) -> str:
    return f"Another row layout ({n}).\n\n```python\nimport triton\n# variant {n}\n```\n"


def _run(tmp_path, answers, evaluations=5):
    provider = LoggedProvider(list(answers))
    provider.log = Log()
    prop = LLMProposer(provider, provider.log, backend=Interp())
    res = optimize(resolve_task("softmax"), Interp(), prop, Correct(), policy=prop.policy("greedy"),
                   budget=Budget(evaluations=evaluations, proposer_calls=20), run_dir=tmp_path / "run",
                   router=prop.router)
    with RunStore.open(tmp_path / "run") as store:
        return res, store.expansions(), store.spent(), provider


def test_a_search_with_correct_answers_spends_every_evaluation(tmp_path):
    # before: the root's level was "served" by its correct child and the child's "written here": the policy
    # found nothing after 2 evaluations of 5
    res, exps, spent, provider = _run(tmp_path, [edit(n) for n in range(10)])
    assert spent["evaluations"] == 5, (res.stop_reason, spent)
    assert res.stop_reason.startswith("budget: evaluations limit 5")
    again = [e for e in exps if e.policy_reason.startswith(REPEAT_NOTE)]
    assert again, [e.policy_reason for e in exps]
    # asked again with its earlier answers in the prompt
    assert "# Asked again" in provider.prompts[-1][1]["content"] or "this run's history" in \
        provider.prompts[-1][1]["content"].lower()


def test_an_early_stop_says_why_and_what_was_left(tmp_path):
    res, _, spent, provider = _run(tmp_path, [DECLINE] * 10)
    assert spent["evaluations"] == 1 and len(provider.prompts) == 1
    assert res.stop_reason.startswith("policy exhausted: no candidate left to expand with 4 evaluation(s) "
                                      "of the budget unused: "), res.stop_reason
    assert "source closed" in res.stop_reason
