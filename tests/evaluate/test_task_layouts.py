"""Material is found by its shape, whatever the prompt's layout calls it.

The layouts are the bench's (``bench.public.layouts``): templates runtimes ship and
layouts written once against nothing the engine lists. The same review must come out of
each as out of the request that sends the passage in ``sources``. (The layouts written
blind are measured by ``bench.public_eval`` only: a test here would tune the engine to them.)
"""

from __future__ import annotations

import json

import pytest

from bench.public.layouts import COMMON, UNUSUAL
from schemas.request import GroundingPolicy, Source
from schemas.result import ReviewResult
from schemas.stages import IssueCode
from workers.evaluate.wall.grounding.policy import infer_policy, read_brief
from workers.evaluate.wall.grounding.task_blocks import blocks_of
from workers.evaluate.wall.grounding.task_parts import split_task
from workers.evaluate.wall.grounding.task_speech import is_directive
from workers.evaluate.wall.substance import asks_for_composition
from workers.judges.builtin import BuiltinJudge
from workers.review import review
from workers.settings import DEFAULT_PRICING

from .builders import request

LAYOUTS = {layout.name: layout for layout in (*COMMON, *UNUSUAL)}

EIFFEL = (
    "The Eiffel Tower was completed in 1889 for the World's Fair. It was designed by the "
    "engineering firm of Gustave Eiffel and is 330 metres tall."
)
QUESTION = "When was the Eiffel Tower completed, and who designed it?"
WRONG = "It was completed in 1925 and designed by the architect Antoni Gaudi."
DIALOGUE = (
    "[Human]: Do you like Iron Man? [Assistant]: Sure do! Robert Downey Jr. is a favorite. "
    "[Human]: Did you know he was also in Zodiac?"
)
KNOWLEDGE = "Robert Downey Jr. starred in Zodiac. Zodiac is starring Jake Gyllenhaal."


def _review(task: str, content: str = WRONG, **fields: object) -> ReviewResult:
    price = DEFAULT_PRICING["claude-sonnet-4-5"]
    output = {"kind": "text", "content": content}
    return review(request(task=task, output=output, **fields), BuiltinJudge(), stage2_price=price)


def _verdict(result: ReviewResult) -> tuple[str, bool, frozenset[IssueCode]]:
    codes = frozenset(i.code for i in result.stage1.wall.issues if i.certainty == "definite")
    return result.decision.value, result.escalation.escalate, codes


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_issues_example_is_decided_alike_in_every_layout(layout: str) -> None:
    """A contradicted date and maker: sent back, whichever way the passage is carried."""
    expected = _verdict(_review(QUESTION, sources=[{"id": "ctx", "text": EIFFEL}]))
    assert IssueCode.CONTRADICTS_INPUT in expected[2]
    assert _verdict(_review(LAYOUTS[layout].render(EIFFEL, QUESTION))) == expected


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_each_layout_gives_the_passage_as_material_and_the_question_as_the_ask(layout: str) -> None:
    parts = split_task(LAYOUTS[layout].render(EIFFEL, QUESTION))
    assert [m for m in parts.material if "Gustave Eiffel" in m]
    assert parts.ask is not None and QUESTION in parts.ask.replace("\n", " ")
    assert parts.subject is not None and "Gustave" not in parts.subject


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_dialogue_stays_the_ask_and_its_policy_is_open_in_every_layout(layout: str) -> None:
    brief = read_brief(LAYOUTS[layout].render(KNOWLEDGE, DIALOGUE))
    assert brief.use is not None and brief.use.policy is GroundingPolicy.OPEN
    assert brief.parts.ask is not None and "[Assistant]: Sure do!" in brief.parts.ask
    assert any("Jake Gyllenhaal" in m for m in brief.parts.material)


def test_a_passage_under_a_label_nobody_lists_is_material() -> None:
    for task in (
        f"Snippet: {EIFFEL}\n\nMy question: {QUESTION}",
        f"<kb_entry>\n{EIFFEL}\n</kb_entry>\n{QUESTION}",
        f"{QUESTION}\n\n{EIFFEL}",
        f"Here is what the wiki says:\n> {EIFFEL}\n\n{QUESTION}",
        json.dumps({"hits": [EIFFEL], "q": QUESTION}),
    ):
        parts = split_task(task)
        assert parts.material == (EIFFEL,), task
        assert parts.ask is not None and QUESTION in parts.ask


def test_an_instruction_alone_has_no_material_and_no_grounding() -> None:
    for task in (
        "Write a haiku about autumn.",
        "Write a poem for my mother.\n\nIt is for her birthday.",
        "You are a senior engineer. Write a Flask route that returns JSON.\n\n"
        "Use type hints. Do not use global state.",
    ):
        brief = read_brief(task)
        assert brief.parts.material == (), task
        assert brief.use is None


def test_a_question_an_abbreviation_cuts_in_two_stays_the_ask() -> None:
    """``St.`` ends a "sentence": the question's first half is not a passage."""
    task = (
        "Enterprise Car Sales was established in 1962 by founder Jack Taylor, which American "
        "car rental company headquartered in Clayton, Missouri, United States in Greater St. "
        "Louis?"
    )
    assert split_task(task).material == ()


def test_a_line_between_two_rules_is_framed_text_not_a_heading() -> None:
    task = f"Context information is below.\n-----\n{KNOWLEDGE}\n-----\nAnswer: {QUESTION}"
    assert split_task(task).material == (KNOWLEDGE,)
    headed = f"Facts\n=====\n{KNOWLEDGE}\n\n{QUESTION}"
    assert [b.label for b in blocks_of(headed) if b.text == KNOWLEDGE] == ["facts"]


def test_words_anywhere_in_the_task_support_the_output_when_the_split_is_unsure() -> None:
    """What the ask names is input too: an answer may repeat it, not invent beside it."""
    task = f"Write about Gyllenhaal. Did he play Robert Graysmith?\n\n{KNOWLEDGE}"
    brief = read_brief(task)
    assert brief.use is not None and "Graysmith" not in " ".join(brief.parts.material)
    said = "Jake Gyllenhaal played Robert Graysmith in Zodiac."
    grounding = _review(task, said).stage1.wall.issues
    assert [i for i in grounding if i.dimension == "grounding"] == []
    invented = _review(task, "Jake Gyllenhaal played Robert Smith in Zodiac.").stage1.wall.issues
    assert [i.code for i in invented if i.dimension == "grounding"] == [IssueCode.UNSUPPORTED_NAME]


def test_the_question_outranks_a_templates_standing_instruction() -> None:
    policy, why = infer_policy("Explain your reasoning step by step.\n\nWho founded Acme?")
    assert policy is GroundingPolicy.EXTRACTIVE, why
    assert infer_policy("Summarize the document. Who founded Acme?")[0] is (
        GroundingPolicy.ABSTRACTIVE
    )


@pytest.mark.parametrize(
    ("sentence", "directive"),
    [
        ("Answer the question using the context.", True),
        ("If you don't know the answer, just say so.", True),
        ("Given the context information, answer the query.", True),
        ("Here's what I pulled up earlier:", True),
        ("State officials said the bridge would reopen.", False),
        ("Thank You for Smoking is a 2005 film.", False),
        ("List of episodes of the first season.", False),
        ('He said "do you know the way?" and left.', False),
        ("Name the two films she directed.", True),
    ],
)
def test_a_sentence_that_speaks_to_the_reader_is_told_from_one_that_states(
    sentence: str, directive: bool
) -> None:
    assert is_directive(sentence) is directive


def test_a_tag_nested_in_one_of_its_own_name_closes_where_it_should() -> None:
    task = (
        '<div class="card">\n  <div class="q">Who designed the tower?</div>\n</div>\n'
        f"<article>\n{EIFFEL}\n</article>"
    )
    parts = split_task(task)
    assert parts.material == (EIFFEL,)
    assert parts.ask == "Who designed the tower?"


def test_lines_of_markup_and_bracketed_labels_are_layout() -> None:
    """Role markers on lines of their own, and ``[query]`` log labels, set parts apart."""
    turns = f"<<turn role=system>>\nYou are a helpful assistant.\n\n{EIFFEL}\n<<end>>\n"
    parts = split_task(f"{turns}<<turn role=user>>\nSummarize the document.\n<<end>>")
    assert parts.material == (EIFFEL,)
    assert parts.ask is not None and "Summarize the document." in parts.ask
    logged = f"[retriever] k=5\n[query] {QUESTION}\n[hits]\n#1 score=0.91 | {EIFFEL}"
    assert read_brief(logged).use is not None
    assert QUESTION in (split_task(logged).ask or "")


def test_a_line_of_its_own_is_a_unit_where_the_text_is_laid_out() -> None:
    """A bold heading over an instruction; a wrapped sentence goes on in lower case."""
    parts = split_task(f"> **Request from the desk**\n> Summarize the document.\n\n{EIFFEL}")
    assert parts.material == (EIFFEL,) and "Summarize" in (parts.ask or "")
    wrapped = "The Eiffel Tower was completed in 1889 for the\nWorld's Fair and is 330 metres tall."
    assert split_task(f"{QUESTION}\n\n{wrapped}").material == (wrapped,)


def test_a_question_without_its_mark_and_an_instruction_after_a_colon_are_the_ask() -> None:
    assert is_directive("Who was once considered the best kick boxer in the world")
    assert is_directive("How many films did she direct")
    assert not is_directive("When the war ended, he moved to Lyon.")
    assert is_directive(
        "The candidate now receives the following and responds to it: Summarize it."
    )
    assert not is_directive("The ratio was fixed: Lyon got two seats.")


def test_a_worked_example_before_the_item_is_not_the_nodes_input() -> None:
    """Few-shot: the example's passage and reply fill the fields the item leaves empty."""
    task = (
        "Task: write the reply that follows from the SOURCE and the INPUT.\n\n"
        "=== Example ===\nSOURCE: Lyon is in France. It has two rivers.\n"
        "INPUT: Where is Lyon?\nREPLY: In France.\n=== End of example ===\n\n"
        f"SOURCE: {EIFFEL}\nINPUT: {QUESTION}\nREPLY:"
    )
    parts = split_task(task)
    assert parts.material == (EIFFEL,)
    assert parts.ask is not None and QUESTION in parts.ask and "Lyon" not in parts.ask
    documents = f"Document: {EIFFEL}\nDocument: {KNOWLEDGE}\nQuestion: {QUESTION}\nAnswer:"
    assert split_task(documents).material == (EIFFEL, KNOWLEDGE)  # two inputs, no example


def test_a_chat_templates_role_headers_are_layout_and_two_messages_a_dialogue() -> None:
    article = f"<article>\n{EIFFEL}\n</article>"
    one = f"developer:\nAnswer from the article.\n\nuser:\n{QUESTION}\n\n{article}\n\nassistant:"
    assert infer_policy(split_task(one).ask)[0] is GroundingPolicy.EXTRACTIVE
    talk = f"user:\nI love Paris.\n\nassistant:\nSo do I!\n\nuser:\n{QUESTION}\n\n{EIFFEL}"
    assert infer_policy(split_task(talk).ask)[0] is GroundingPolicy.OPEN


def test_a_chat_export_keeps_the_passage_its_message_pastes() -> None:
    task = (
        "[10:02] Ana: pasting the piece below\n"
        f"[10:03] Ana: {EIFFEL}\n"
        f"[10:06] Ana: @bot {DIALOGUE}\n"
        "[10:07] Ben: thanks"
    )
    parts = split_task(task)
    assert any("Gustave Eiffel" in m for m in parts.material)
    assert read_brief(task).use is not None
    assert "[Assistant]: Sure do!" in (parts.ask or "")


def test_a_denied_cue_and_a_reply_asked_for_read_as_what_they_say() -> None:
    denied = f"Return the complete content, not a summary.\nEditor request: {QUESTION}"
    assert infer_policy(denied)[0] is GroundingPolicy.EXTRACTIVE
    assert not asks_for_composition("Write a response that appropriately completes the request.")
    assert asks_for_composition("Write an essay about the tower.")
    bot_turn = "Write the comment that @answer-bot should post next. Markdown is allowed."
    assert not asks_for_composition(f"{QUESTION}\n\n{bot_turn}")
    assert not asks_for_composition("Draft a short message to the requester.")
    assert asks_for_composition("Write a blog post about the tower.")
    assert not asks_for_composition(f"Documents:\nDocument[0] (id: d1):\n{EIFFEL}")


def test_numbered_chunks_a_source_holds_are_not_pasted_material_again() -> None:
    chunked = LAYOUTS["numbered-chunks"].render(EIFFEL, QUESTION)
    sources = [Source(id="ctx", text=EIFFEL)]
    parts = split_task(chunked, sources)
    assert parts.pasted and parts.material == ()


def test_a_passage_pasted_a_sentence_a_line_behind_labels_is_left_to_the_source() -> None:
    """A transcript's speakers and a table's columns are not the source's words."""
    sentences = [s + "." for s in EIFFEL.rstrip(".").split(". ")]
    transcript = "\n".join(
        ["[00:00:01] HOST (Ana): Welcome back, our guest has a story."]
        + [f"[00:00:{n:02}] GUEST (Ben): {s}" for n, s in enumerate(sentences, start=2)]
    )
    table = "source\trow\ttext\n" + "\n".join(
        f"kb-0611\t{n}\t{s}" for n, s in enumerate(sentences, start=1)
    )
    sources = [Source(id="ctx", text=EIFFEL)]
    for pasted in (transcript, table):
        parts = split_task(f"{pasted}\n\n{QUESTION}", sources)
        assert parts.pasted
        assert not any("Gustave Eiffel" in m for m in parts.material), pasted
        assert any("Gustave Eiffel" in m for m in split_task(f"{pasted}\n\n{QUESTION}").material)
    kept = split_task(f"{transcript}\n\n{QUESTION}", sources).material
    assert any("Welcome back" in m for m in kept)  # no source holds the host's words


def test_a_role_named_setting_before_the_system_message_is_not_a_turn() -> None:
    """A logged request names its model before the messages: that line is no reply."""
    logged = (
        "POST /v1/chat\nmodel: claude-sonnet  max_tokens: 300\n\nsystem:\n"
        f"Answer from the passage below.\n\n{EIFFEL}\n\nuser:\n{QUESTION}"
    )
    parts = split_task(logged)
    assert any("Gustave Eiffel" in m for m in parts.material)
    assert QUESTION in (parts.ask or "")
    assert infer_policy(parts.ask)[0] is GroundingPolicy.EXTRACTIVE
    chat = f"system:\nBe brief.\n\nuser:\n{QUESTION}\n\nassistant:\nIn 1889.\n\nuser:\nWhy?"
    assert infer_policy(split_task(f"{EIFFEL}\n\n{chat}").ask)[0] is GroundingPolicy.OPEN


def test_a_value_is_not_a_request_and_a_role_named_mid_sentence_is_not_a_turn() -> None:
    """'status: draft' in a note's properties asks for no composition; 'reply as the voice
    assistant:' names a role inside an instruction, and starts no speaker's turn."""
    note = f"---\nstatus: draft\n---\n# Open question\n\n{QUESTION}\n\n> {EIFFEL}"
    assert not asks_for_composition(note)
    assert asks_for_composition("Draft a letter to the city about the tower.")
    spoken = f"{EIFFEL}\n\n{QUESTION}\n\nReply as the voice assistant: one short sentence."
    assert infer_policy(split_task(spoken).ask)[0] is GroundingPolicy.EXTRACTIVE
    assert infer_policy(split_task(f"{EIFFEL}\n\n{DIALOGUE}").ask)[0] is GroundingPolicy.OPEN
