"""Prompt layouts: the ways a runtime pastes a node's input into its task.

A verdict must not depend on where the input sits, nor on how the prompt that carries it
is laid out. Each layout here takes the material (a knowledge passage or a document) and
the ask (a question, an instruction, a dialogue so far) and writes the task a runtime
would send. The families:

- ``benchmark``: the templates ``bench.public.halueval`` has always written, three per file.
- ``common``: layouts people use, copied from the projects that ship them (LangChain's
  default retrieval-QA prompt, the LangChain hub's ``rlm/rag-prompt`` system-style
  preamble, LlamaIndex's default text-QA template, Anthropic's long-context document
  tags, and the plain "Context: / Question: / Answer:" form).
- ``unusual``: layouts written once for this bench, before the engine was changed to
  read them, and never tuned to one by one: unlabelled, labels and tags nobody lists,
  a quoted block, numbered retrieval chunks, a JSON payload.
- ``blind``: five sets of layouts written blind, after the engine, by someone who had not
  read it (``bench.public.layouts_blind``: chat turns flattened with role markers, a
  Markdown brief, YAML front matter, an email thread, a ticket export, an HTML page, rules
  stated as facts with the passage introduced mid-sentence, a reranker's log;
  ``layouts_blind_2``: a DSPy signature prompt, a Haystack prompt, an OpenAI developer and
  user message flattened, a CrewAI task, a notebook cell, a retrieval table, a few-shot
  prompt, a Slack thread; ``layouts_unseen``: a Semantic Kernel chat template, a Gemini
  request logged as YAML, a ReAct scratchpad, a policy with a tab-separated reference, a
  GitHub issue thread, a podcast transcript, a support e-mail, a map-reduce combine step;
  ``layouts_unseen_2``: a Next.js AI SDK route, a search results page, an agent's
  tool-call log, XML documents with attributes, a Linear issue, a Slack quote with a
  mention, a passage pasted mid-sentence, a bilingual Chinese and English prompt;
  ``layouts_unseen_3``: a flattened Llama-2 chat template, a LlamaIndex refine prompt, a
  browser extension's "ask about this page", a Zendesk macro, a Discord bot command with
  an attachment, a voice assistant's transcript, an Obsidian note, a passage split around
  its instructions). Each was measured unseen first; the engine was then improved on what
  their dev half showed, so they are seen now.
- ``unseen``: a sixth blind set, written after the engine's last change and never looked
  at (``bench.public.layouts_unseen_4``): an AWS Bedrock knowledge-base prompt, ChatML
  flattened, an RSS reader's item, a Jira Service Management request, an answer engine's
  numbered sources, a spreadsheet row, Notion's "Ask AI", a LangSmith trace as text.

A layout that names a material label the engine happens to know is fine; the point of the
unusual family is that nothing in it does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from bench.public.layouts_blind import BLIND as FIRST_BLIND
from bench.public.layouts_blind_2 import BLIND as SECOND_BLIND
from bench.public.layouts_unseen import BLIND as THIRD_BLIND
from bench.public.layouts_unseen_2 import BLIND as FOURTH_BLIND
from bench.public.layouts_unseen_3 import BLIND as FIFTH_BLIND
from bench.public.layouts_unseen_4 import BLIND as SIXTH_BLIND


class Family(StrEnum):
    """Where a layout comes from."""

    BENCHMARK = "benchmark"
    """The templates the bench always wrote (``halueval.PROMPTS``)."""
    COMMON = "common"
    """Layouts real runtimes ship."""
    UNUSUAL = "unusual"
    """Layouts written once for this bench, against nothing the engine lists."""
    BLIND = "blind"
    """Written blind, after the engine; measured unseen once, then improved on (dev half)."""
    UNSEEN = "unseen"
    """Written blind after the engine's last change, and never looked at."""


@dataclass(frozen=True)
class PromptLayout:
    """One way of writing a task around the material and the ask."""

    name: str
    family: Family
    render: Callable[[str, str], str]
    """``(material, ask) -> task``."""
    origin: str
    """Where the layout comes from."""


def _template(text: str) -> Callable[[str, str], str]:
    return lambda material, ask: text.format(material=material, ask=ask)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


def _chunks(material: str, count: int = 3) -> list[str]:
    """The material cut at sentence ends into at most ``count`` chunks, as a retriever would."""
    said = [s for s in _SENTENCE_END.split(material) if s.strip()]
    if len(said) < 2:
        return [material]
    size = -(-len(said) // count)
    return [" ".join(said[i : i + size]) for i in range(0, len(said), size)]


def _numbered_chunks(material: str, ask: str) -> str:
    chunks = "\n".join(f"[{n}] {chunk}" for n, chunk in enumerate(_chunks(material), start=1))
    return f"{chunks}\n\n{ask}"


def _quoted(material: str, ask: str) -> str:
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in material.splitlines())
    return f"Here's what I pulled up earlier:\n\n{quoted}\n\n{ask}"


def _json_payload(material: str, ask: str) -> str:
    return json.dumps({"hits": [material], "ask": ask}, indent=2, ensure_ascii=False)


COMMON = (
    PromptLayout(
        "langchain-rag",
        Family.COMMON,
        _template(
            "Use the following pieces of context to answer the question at the end. If you "
            "don't know the answer, just say that you don't know, don't try to make up an "
            "answer.\n\n{material}\n\nQuestion: {ask}\nHelpful Answer:"
        ),
        "LangChain's default retrieval-QA prompt (langchain.chains.retrieval_qa.prompt)",
    ),
    PromptLayout(
        "rag-preamble",
        Family.COMMON,
        _template(
            "You are an assistant for question-answering tasks. Use the following pieces of "
            "retrieved context to answer the question. If you don't know the answer, just say "
            "that you don't know. Use three sentences maximum and keep the answer concise.\n"
            "Question: {ask} \nContext: {material} \nAnswer:"
        ),
        "the LangChain hub's rlm/rag-prompt: a system-style preamble, the question first",
    ),
    PromptLayout(
        "context-question",
        Family.COMMON,
        _template("Context: {material}\n\nQuestion: {ask}\n\nAnswer:"),
        "the plain Context: / Question: / Answer: form",
    ),
    PromptLayout(
        "llamaindex-qa",
        Family.COMMON,
        _template(
            "Context information is below.\n---------------------\n{material}\n"
            "---------------------\nGiven the context information and not prior knowledge, "
            "answer the query.\nQuery: {ask}\nAnswer: "
        ),
        "LlamaIndex's DEFAULT_TEXT_QA_PROMPT_TMPL",
    ),
    PromptLayout(
        "document-tags",
        Family.COMMON,
        _template(
            '<documents>\n<document index="1">\n<source>retrieved.txt</source>\n'
            "<document_content>\n{material}\n</document_content>\n</document>\n</documents>"
            "\n\n{ask}"
        ),
        "Anthropic's long-context prompting guide: documents in XML tags, the ask after",
    ),
)

UNUSUAL = (
    PromptLayout(
        "ask-then-text",
        Family.UNUSUAL,
        _template("{ask}\n\n{material}"),
        "no label at all: the ask, a blank line, then the passage",
    ),
    PromptLayout(
        "underlined-headings",
        Family.UNUSUAL,
        _template("Dossier\n=======\n\n{material}\n\nWhat I need\n===========\n\n{ask}"),
        "setext headings with names no list holds",
    ),
    PromptLayout(
        "odd-tags",
        Family.UNUSUAL,
        _template('<kb_entry id="KB-1841">\n{material}\n</kb_entry>\n<msg>{ask}</msg>'),
        "tags with names no list holds",
    ),
    PromptLayout(
        "quoted-block",
        Family.UNUSUAL,
        _quoted,
        "the passage as a markdown block quote under a chatty line, the ask after",
    ),
    PromptLayout(
        "numbered-chunks",
        Family.UNUSUAL,
        _numbered_chunks,
        "retrieval chunks numbered [1], [2], [3], cut at sentence ends, the ask after",
    ),
    PromptLayout(
        "json-payload",
        Family.UNUSUAL,
        _json_payload,
        "a JSON object dumped into the prompt: the passage in a list, the ask beside it",
    ),
)

BLIND = tuple(
    PromptLayout(name.replace("_", "-"), Family.BLIND, render, where)
    for name, where, render in (
        *FIRST_BLIND,
        *SECOND_BLIND,
        *THIRD_BLIND,
        *FOURTH_BLIND,
        *FIFTH_BLIND,
    )
)
UNSEEN = tuple(
    PromptLayout(name.replace("_", "-"), Family.UNSEEN, render, where)
    for name, where, render in SIXTH_BLIND
)

#: Every layout but the benchmark's own, by name.
LAYOUTS: dict[str, PromptLayout] = {
    layout.name: layout for layout in (*COMMON, *UNUSUAL, *BLIND, *UNSEEN)
}
