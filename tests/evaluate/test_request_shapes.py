"""The same verdict whatever the request's shape, and a policy read from the task.

Input pasted into ``task`` is input like ``sources``; the ask around it is what the node
was asked. Without a declared policy the one the ask implies is used, and the result says
which and why.
"""

from __future__ import annotations

import json

import pytest

from schemas.judging import JudgeTier
from schemas.quality import CEILING_DIMENSIONS, Dimension
from schemas.request import GroundingPolicy, ReviewRequest, Source
from schemas.result import ReviewResult
from schemas.stages import IssueCode
from workers.evaluate.judge_task import task_for
from workers.evaluate.wall.grounding.policy import DECLARED, DEFAULT, infer_policy, read_brief
from workers.evaluate.wall.grounding.task_parts import split_task, task_for_judge
from workers.judges.builtin import BuiltinJudge
from workers.review import review
from workers.settings import DEFAULT_PRICING

from .builders import request

ARTICLE = (
    "Acme Robotics was founded in 1998 by Maria Lopez in Lyon, France. The company employs "
    "1,250 people and builds warehouse robots. Twenty-nine of its robots work in the Lyon "
    "depot. Last year it opened a second depot in Marseille, its first outside Lyon."
)
SUMMARY_TASK = "Summarize the document."
PROMPTS = (
    "Summarize the document.\nDocument: {article}",
    "Summarize the following article:\n\n{article}",
    "<document>\n{article}\n</document>\nWrite a short summary of the document above.",
    "### Context\n{article}\n\n### Task\nSummarize the context.",
)


def _review(**fields: object) -> ReviewResult:
    price = DEFAULT_PRICING["claude-sonnet-4-5"]
    return review(request(**fields), BuiltinJudge(), stage2_price=price)


def _shapes(prompt: str, content: str) -> dict[str, ReviewResult]:
    output = {"kind": "text", "content": content}
    source = [{"id": "doc", "text": ARTICLE}]
    task = prompt.format(article=ARTICLE)
    return {
        "sources": _review(task=SUMMARY_TASK, sources=source, output=output),
        "task": _review(task=task, output=output),
        "both": _review(task=task, sources=source, output=output),
    }


@pytest.mark.parametrize("prompt", PROMPTS)
@pytest.mark.parametrize(
    "content",
    [
        "Maria Lopez founded Acme Robotics in Lyon in 1998; it employs 1,250 people.",
        "Acme Robotics, founded in 2004 by Jean Dupont, employs 3,000 people in Paris.",
    ],
)
def test_input_in_task_sources_or_both_gives_the_same_verdict(prompt: str, content: str) -> None:
    results = _shapes(prompt, content)
    verdicts = {
        shape: (
            r.decision,
            r.stage1.wall.passed,
            r.quality.grounding.value,
            tuple(sorted((i.code, i.certainty) for i in r.stage1.wall.issues)),
        )
        for shape, r in results.items()
    }
    assert len(set(verdicts.values())) == 1, verdicts
    assert all(r.stage1.wall.grounding is not None for r in results.values())


def test_a_wrong_summary_is_caught_in_every_shape_and_a_right_one_accepted() -> None:
    for prompt in PROMPTS:
        right = _shapes(prompt, "Maria Lopez founded Acme Robotics in Lyon in 1998.")
        wrong = _shapes(prompt, "Acme Robotics was founded in 2004 and employs 3,000 people.")
        assert {r.decision.value for r in right.values()} == {"accept"}
        # Numbers the input gives differently are definite: Stage 1 sends it back itself.
        assert {r.decision.value for r in wrong.values()} == {"iterate"}
        assert not any(r.escalation.escalate for r in wrong.values())


BIOGRAPHIES = (
    "Odile Marchand (born 2 March 1911) was a French poet. "
    "Thomas Reed (born 2 June 1953) is an American philosopher."
)
QA_PROMPTS = (
    "Answer the question using the knowledge.\nKnowledge: {material}\nQuestion: {ask}",
    "### Background\n{material}\n\n### Question\n{ask}",
)


@pytest.mark.parametrize("prompt", QA_PROMPTS)
@pytest.mark.parametrize("answer", ["Thomas Reed was born earlier.", "Odile Marchand."])
def test_a_labelled_question_is_read_as_the_question_alone(prompt: str, answer: str) -> None:
    """ "Question: Who ...?" is the question "Who ...?": the label is layout.

    With the label read as part of the ask, a choice between two people went unread in
    the task shapes, and a wrong choice was sent back only when the question came alone.
    """
    ask = "Who was born earlier, Odile Marchand or Thomas Reed?"
    output = {"kind": "text", "content": answer}
    alone = _review(task=ask, sources=[{"id": "k", "text": BIOGRAPHIES}], output=output)
    pasted = _review(task=prompt.format(material=BIOGRAPHIES, ask=ask), output=output)
    found = [tuple(sorted(i.code for i in r.stage1.wall.issues)) for r in (alone, pasted)]
    assert found[0] == found[1]
    assert alone.decision == pasted.decision
    assert (IssueCode.CONTRADICTS_INPUT in found[0]) is answer.startswith("Thomas")


@pytest.mark.parametrize(
    "ask",
    [
        "Summarize the document in a few sentences.",
        "Summarize the following article:\n\n{article}",
        "<document>\n{article}\n</document>\nWrite a short summary of the document above.",
        "Give a brief summary of the text below in three sentences:\n{article}",
    ],
)
def test_the_ceiling_judges_an_ask_the_same_however_it_is_worded(ask: str) -> None:
    """Words that set form or point at the input are not what an answer must cover.

    HaluEval summaries: "in a few sentences" counted as two missing task terms, so the
    built-in judge marked down escalated summaries only in the shape that said it.
    """
    output = {"kind": "text", "content": "Maria Lopez founded Acme Robotics in Lyon in 1998."}
    tasks = (SUMMARY_TASK, ask.format(article=ARTICLE))
    judged = [
        BuiltinJudge()
        .evaluate(
            task_for(
                request(task=task, sources=[{"id": "doc", "text": ARTICLE}], output=output),
                JudgeTier.CEILING,
                CEILING_DIMENSIONS,
            )
        )
        .scores
        for task in tasks
    ]
    assert judged[0] == judged[1]
    assert judged[0][Dimension.RELEVANCE].score > 0.5


def test_a_judge_reads_material_a_source_holds_once() -> None:
    source = (Source(id="doc", text=ARTICLE),)
    for prompt in PROMPTS:
        task = prompt.format(article=ARTICLE)
        judged = task_for_judge(task, source)
        assert judged is not None and ARTICLE not in judged and "ummar" in judged
        assert task_for_judge(task) == task  # no source holds it: the task keeps it
    assert task_for_judge(SUMMARY_TASK, source) == SUMMARY_TASK
    assert task_for_judge(None, source) is None


def test_the_task_is_split_into_its_ask_and_the_material_pasted_into_it() -> None:
    parts = split_task(f"Answer from the knowledge.\nKnowledge: {ARTICLE}\nQuestion: Who?")
    assert parts.material == (ARTICLE,)
    assert parts.ask is not None and "Who?" in parts.ask and "1998" not in parts.ask
    assert "Question:" not in parts.ask
    assert split_task("Write a poem about autumn.").material == ()
    dialogue = "Reply to this conversation:\n[Human]: hi there [Assistant]: hello [Human]: " + (
        "tell me about robots " * 10
    )
    assert split_task(dialogue).material == ()  # a dialogue is the ask, however long
    copied = split_task(f"Summarize.\nDocument: {ARTICLE}", [Source(id="d", text=ARTICLE)])
    assert copied.material == () and copied.pasted  # a source already holds it


@pytest.mark.parametrize(
    ("ask", "policy"),
    [
        ("Which magazine was started first, Arthur's Magazine or First for Women?", "extractive"),
        ("The 2017 film was directed by whom?", "extractive"),
        ("Summarize the document in a few sentences.", "abstractive"),
        ("Rewrite this paragraph for a child.", "abstractive"),
        ("Why did the cache fail?", "abstractive"),
        ("[Human]: Do you like Iron Man? [Assistant]: Sure! [Human]: Who else starred?", "open"),
        ("User: Could you recommend a book like Dune?", "open"),
        ("Could you recommend books similar to Dead to the World?", "open"),
        ("Write a report from the notes.", "abstractive"),
    ],
)
def test_the_policy_is_inferred_from_what_the_node_was_asked(ask: str, policy: str) -> None:
    inferred, reason = infer_policy(ask)
    assert inferred.value == policy
    assert reason


def test_a_declared_policy_wins_and_no_input_means_no_policy() -> None:
    source = (Source(id="d", text=ARTICLE),)
    declared = read_brief("Which year?", source, GroundingPolicy.OPEN).use
    assert declared is not None and declared.policy is GroundingPolicy.OPEN
    assert declared.declared and declared.reason == DECLARED
    assert read_brief("Write a poem about autumn.", ()).use is None
    default = read_brief("", source).use
    assert default is not None and default.reason == DEFAULT and not default.declared


def test_the_result_says_which_policy_was_used_and_why() -> None:
    result = _review(
        task="Who founded Acme Robotics?",
        sources=[{"id": "doc", "text": ARTICLE}],
        output={"kind": "text", "content": "Maria Lopez."},
    )
    use = result.stage1.wall.grounding
    assert use is not None and use.policy is GroundingPolicy.EXTRACTIVE and not use.declared
    assert "factual question" in use.reason
    wire = ReviewResult.model_validate_json(result.model_dump_json())
    assert wire.stage1.wall.grounding == use
    assert "inferred" in json.dumps(result.quality.grounding.justification)
    assert ReviewRequest.model_fields["grounding"].default is None
