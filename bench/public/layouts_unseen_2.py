"""Prompt layouts written blind (the fourth set): by someone who had not read the engine.

They were written to the brief (realistic, varied, every word of the material and the ask
kept in order; no existing template copied) by someone who had read neither the engine nor
any earlier layout, after the engine's last change. Their first measurement is in the
history of ``bench/results/public_eval_layouts.json``; the engine was then improved on what
their dev half showed (a logged request's "model:" setting taken for a chat message), so
they are no longer unseen: ``layouts_unseen_3`` is.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterator

from bench.public.layout_checks import check_layout

# --------------------------------------------------------------------------------------------
# Helpers: every helper only moves whitespace around (cuts at sentence ends, line prefixes,
# indentation); none of them drops, reorders or rewrites a word.
# --------------------------------------------------------------------------------------------

_ABBREVIATIONS = frozenset(
    {
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "st",
        "jr",
        "sr",
        "vs",
        "etc",
        "inc",
        "ltd",
        "co",
        "corp",
        "no",
        "fig",
        "gen",
        "gov",
        "sen",
        "rep",
        "lt",
        "col",
        "capt",
        "mt",
        "approx",
        "dept",
        "e.g",
        "i.e",
        "u.s",
        "u.k",
        "a.m",
        "p.m",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    }
)

# A sentence end: terminal punctuation, optional closing quotes/brackets, then whitespace, then
# something that looks like the start of a sentence.
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*(\s+)(?=[\"'“‘(\[]?[A-Z0-9])")


def _last_word_before(text: str, pos: int) -> str:
    start = max(text.rfind(" ", 0, pos), text.rfind("\n", 0, pos), text.rfind("\t", 0, pos))
    return text[start + 1 : pos]


def _sentence_cuts(text: str) -> Iterator[tuple[int, int]]:
    """Yield the whitespace spans at which ``text`` may be cut between two sentences."""
    for match in _BOUNDARY.finditer(text):
        ws_start, ws_end = match.span(1)
        word = _last_word_before(text, ws_start)
        bare = word.strip("\"'“”‘’()[]").rstrip(".!?").lower()
        if bare in _ABBREVIATIONS or (len(bare) == 1 and bare.isalpha()):
            continue
        yield ws_start, ws_end


def _chunks(text: str, parts: int) -> list[str]:
    """Cut ``text`` at sentence ends into at most ``parts`` pieces of roughly equal length."""
    text = text.strip()
    target = len(text) / max(parts, 1)
    pieces: list[str] = []
    start = 0
    for ws_start, ws_end in _sentence_cuts(text):
        if len(pieces) == parts - 1:
            break
        if ws_start - start >= target:
            pieces.append(text[start:ws_start])
            start = ws_end
    pieces.append(text[start:])
    return pieces


def _prefix_lines(text: str, prefix: str, blank: str) -> str:
    return "\n".join(prefix + line if line.strip() else blank for line in text.split("\n"))


# --------------------------------------------------------------------------------------------
# 1. A Next.js route handler using the AI SDK: the retrieved context is folded into the system
#    prompt, the user's turn goes in as-is, and the request is logged as role-prefixed text.
# --------------------------------------------------------------------------------------------


def render_nextjs_ai_sdk_route(material: str, ask: str) -> str:
    system = (
        "You are the in-app assistant for Lumen Docs. Respond to the user's latest message "
        "using the context provided below. If the context does not contain what is needed, "
        "say so plainly instead of guessing. Keep the reply concise and in plain prose.\n"
        "\n"
        "CONTEXT START\n"
        f"{material.strip()}\n"
        "CONTEXT END"
    )
    return (
        "[app/api/chat/route.ts] streamText request\n"
        "model: openai/gpt-4o-mini  temperature: 0.2  maxTokens: 512\n"
        "\n"
        "system:\n"
        f"{system}\n"
        "\n"
        "user:\n"
        f"{ask.strip()}"
    )


# --------------------------------------------------------------------------------------------
# 2. A web-search tool's results page: the query first, then the passage split over up to three
#    snippets, each with a title and URL, then the instruction to answer from the results.
# --------------------------------------------------------------------------------------------

_SERP_SOURCES: tuple[tuple[str, str], ...] = (
    ("Overview and background - Open Reference Wiki", "https://openref.example.org/wiki/Overview"),
    (
        "Key facts at a glance | The Daily Ledger",
        "https://dailyledger.example.com/explainers/facts",
    ),
    ("Frequently asked questions - Library Guides", "https://guides.example.edu/faq/reference"),
)


def render_search_results_page(material: str, ask: str) -> str:
    snippets = _chunks(material, len(_SERP_SOURCES))
    lines = [
        f"Web results for: {ask.strip()}",
        f"About {len(snippets)} result{'' if len(snippets) == 1 else 's'} (0.31 seconds)",
        "",
    ]
    for index, snippet in enumerate(snippets):
        title, url = _SERP_SOURCES[index]
        lines.append(f"[{index + 1}] {title}")
        lines.append(f"    {url}")
        lines.append(textwrap.indent(snippet, "    "))
        lines.append("")
    lines.append(
        "Using only the search results above, respond to the query. Cite the results you rely "
        "on by their bracketed numbers."
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# 3. An agent's message log (OpenAI-style tool calling) dumped as text: the user's turn, the
#    model's function call as JSON, the tool's raw result holding the passage, then an open
#    assistant turn. The ask comes first.
# --------------------------------------------------------------------------------------------


def render_agent_tool_call_log(material: str, ask: str) -> str:
    tool_call = (
        '[{"id": "call_8QmZ2", "type": "function", "function": {"name": "fetch_passage", '
        '"arguments": "{\\"collection\\": \\"kb-main\\", \\"top_k\\": 1}"}}]'
    )
    return (
        "=== agent run 0193-af2c | model=gpt-4.1 | tools=[fetch_passage] ===\n"
        "--- messages[0] role=user\n"
        f"{ask.strip()}\n"
        "--- messages[1] role=assistant content=null tool_calls=\n"
        f"{tool_call}\n"
        "--- messages[2] role=tool tool_call_id=call_8QmZ2 name=fetch_passage\n"
        f"{material.strip()}\n"
        "--- messages[3] role=assistant\n"
        "(awaiting completion: answer messages[0] from the tool result in messages[2])"
    )


# --------------------------------------------------------------------------------------------
# 4. An XML-tagged prompt with attributes on the retrieved document, as retrieval pipelines
#    build for models that were trained to read tags.
# --------------------------------------------------------------------------------------------


def render_xml_doc_attributes(material: str, ask: str) -> str:
    return (
        "<instructions>\n"
        "Read the document, then carry out the request. Rely on the document's content; when it "
        "is silent on a point, say that it is.\n"
        "</instructions>\n"
        "<documents>\n"
        '<doc index="1" source="kb://articles/0412" score="0.83" retriever="hybrid-bm25-dense">\n'
        f"{material.strip()}\n"
        "</doc>\n"
        "</documents>\n"
        '<request channel="web" locale="en-US">\n'
        f"{ask.strip()}\n"
        "</request>"
    )


# --------------------------------------------------------------------------------------------
# 5. A Linear issue assigned to an AI agent: fields, the customer's message, the linked
#    knowledge-base excerpt, then acceptance criteria (so the ask is not at the end).
# --------------------------------------------------------------------------------------------


def render_linear_issue(material: str, ask: str) -> str:
    return (
        "SUP-2147  Draft a reply to an inbound customer message\n"
        "Status: In Progress    Priority: Medium    Assignee: support-agent (AI)\n"
        "Labels: customer-reply, knowledge-base    Cycle: Cycle 38\n"
        "\n"
        "Description\n"
        "\n"
        "Customer message (from Intercom conversation #55120):\n"
        "\n"
        f"{ask.strip()}\n"
        "\n"
        "Linked knowledge-base excerpt:\n"
        "\n"
        f"{material.strip()}\n"
        "\n"
        "Acceptance criteria\n"
        "- [ ] The reply deals with the customer message directly\n"
        "- [ ] Every claim in the reply is backed by the linked excerpt\n"
        "- [ ] No more than one short paragraph unless a summary is requested\n"
    )


# --------------------------------------------------------------------------------------------
# 6. A Slack thread message mentioning a bot: the passage is pasted as a block quote with no
#    label at all, and the ask follows underneath.
# --------------------------------------------------------------------------------------------


def render_slack_quote_mention(material: str, ask: str) -> str:
    quoted = _prefix_lines(material.strip(), "> ", ">")
    return (
        "#team-research  ·  thread\n"
        "priya.n  2:14 PM\n"
        "@helper-bot\n"
        f"{quoted}\n"
        f"{ask.strip()}\n"
        "(reply in thread pls)"
    )


# --------------------------------------------------------------------------------------------
# 7. A chat user who introduces the passage in the middle of a sentence: no label, no
#    delimiters, the passage just runs on inside the message.
# --------------------------------------------------------------------------------------------


def render_mid_sentence_paste(material: str, ask: str) -> str:
    return (
        "ok so a friend sent me this and I'm copying it word for word, it says "
        f"{material.strip()} "
        "... and that's the whole thing they sent.\n"
        "\n"
        f"{ask.strip()}"
    )


# --------------------------------------------------------------------------------------------
# 8. A bilingual (Chinese/English) instruction prompt from an Alpaca-style fine-tuning or
#    serving stack: labels in both languages, the user input before the reference material.
# --------------------------------------------------------------------------------------------


def render_bilingual_zh_en(material: str, ask: str) -> str:
    return (
        "### 指令 / Instruction\n"
        "请阅读下面的参考资料，并用英文完成用户的输入。只使用参考资料中的信息。\n"
        "Read the reference material below and complete the user input in English, using only "
        "information from the reference.\n"
        "\n"
        "### 用户输入 / User input\n"
        f"{ask.strip()}\n"
        "\n"
        "### 参考资料 / Reference\n"
        f"{material.strip()}\n"
        "\n"
        "### 回答 / Response\n"
    )


BLIND: tuple[tuple[str, str, Callable[[str, str], str]], ...] = (
    (
        "nextjs_ai_sdk_route",
        "Next.js route handler with the AI SDK: context folded into the system prompt between "
        "CONTEXT START/END markers, user turn after, logged as role-prefixed text",
        render_nextjs_ai_sdk_route,
    ),
    (
        "search_results_page",
        "web-search tool output: the query first, the passage split at sentence ends over up to "
        "three titled snippets with URLs, then an answer-from-results instruction",
        render_search_results_page,
    ),
    (
        "agent_tool_call_log",
        "agent message log with OpenAI-style tool calling: user turn, JSON function call, raw "
        "tool result holding the passage, open assistant turn",
        render_agent_tool_call_log,
    ),
    (
        "xml_doc_attributes",
        "XML-tagged RAG prompt: instructions, <doc> with source/score/retriever attributes, "
        "then a <request> element with the ask",
        render_xml_doc_attributes,
    ),
    (
        "linear_issue",
        "Linear issue assigned to an AI agent: fields, the customer message, the linked "
        "knowledge-base excerpt, then acceptance criteria",
        render_linear_issue,
    ),
    (
        "slack_quote_mention",
        "Slack thread message @-mentioning a bot: the passage pasted as an unlabelled '> ' "
        "block quote, the ask underneath",
        render_slack_quote_mention,
    ),
    (
        "mid_sentence_paste",
        "chat user pasting the passage mid-sentence with no label or delimiters, the ask in a "
        "following paragraph",
        render_mid_sentence_paste,
    ),
    (
        "bilingual_zh_en",
        "Alpaca-style instruction prompt with Chinese/English section labels, the user input "
        "before the reference material",
        render_bilingual_zh_en,
    ),
)


# --------------------------------------------------------------------------------------------
# Self-check
# --------------------------------------------------------------------------------------------

_SAMPLE_MATERIALS: tuple[str, ...] = (
    "The Martian is starring Matt Damon",
    (
        "Iron Man is a 2008 American superhero film based on the Marvel Comics character of the "
        "same name. It was directed by Jon Favreau.It stars Robert Downey Jr. as Tony Stark, "
        "alongside Terrence Howard, Jeff Bridges and Gwyneth Paltrow. Technical consultant "
        "Dr. Anjali Mehta of the U.S. Air Force Research Lab advised on the suit's design, "
        "e.g. the arc reactor. Filming began in Mar. 2007 in California."
    ),
    (
        "Harbor City council approves $240 million flood barrier after years of delay\n"
        "\n"
        "HARBOR CITY - The city council voted 9-2 on Tuesday night to approve a $240 million "
        "flood barrier along the eastern waterfront, ending nearly a decade of debate over how "
        "to protect low-lying neighborhoods from storm surge. The project, which will be funded "
        "by a mix of municipal bonds and federal grants, is expected to break ground next "
        "spring and take roughly four years to complete.\n"
        "\n"
        '"This is the most important infrastructure decision this council has made in a '
        'generation," said Mayor Elena Ruiz, who has championed the barrier since her first '
        "campaign. She pointed to the 2019 storm that flooded more than 3,000 homes and "
        'shuttered the port for eleven days. "We cannot afford another week like that."\n'
        "\n"
        "The barrier will consist of a 2.7-mile earthen levee, two movable gates at the mouth "
        "of the Kessler Canal, and a pumping station capable of moving 1.2 million gallons of "
        "water per minute. Engineers from the U.S. Army Corps of Engineers reviewed the design "
        "last year and recommended raising the levee height by 18 inches to account for "
        "projected sea-level rise through 2080.\n"
        "\n"
        "Not everyone is convinced. Councilmember Dana Whitfield, one of the two dissenting "
        "votes, argued that the plan does too little for the city's western districts, where "
        'flooding is driven by heavy rainfall rather than tides. "We are spending a quarter '
        'of a billion dollars on one side of town," Whitfield said. "Residents on Fulton '
        'Street still get water in their basements every time it rains hard."\n'
        "\n"
        "Environmental groups have also raised concerns. The Coastal Marsh Alliance said the "
        "gates could alter the flow of salt water into the canal's wetlands, which provide "
        "habitat for several species of migratory birds. The group's director, Dr. Samuel "
        "Okafor, said the alliance would not sue to stop the project but would push for "
        "independent monitoring of water quality once construction begins.\n"
        "\n"
        "City officials said property owners along the waterfront would see a modest increase "
        "in their annual assessments, averaging about $85 per household, to cover maintenance "
        "costs. The council also approved a separate $12 million program to help homeowners "
        "in flood-prone areas elevate utilities and install backflow valves.\n"
        "\n"
        "Construction contracts are expected to be put out for bid this fall. The city's "
        "Office of Resilience will hold public meetings in each of the affected neighborhoods "
        "before final designs are approved, according to its director, Marcus Lee.\n"
        "\n"
        '"People deserve to know exactly what is being built in their backyard," Lee said. '
        '"We intend to show them, street by street."'
    ),
)

_SAMPLE_ASKS: tuple[str, ...] = (
    "Who directed Iron Man?",
    "when was the Oberoi Group founded",
    "Summarize the document in a few sentences.",
    (
        "[Human]: Do you like Iron Man [Assistant]: Sure do! Robert Downey Jr. is great in it. "
        "[Human]: Who else stars in it?"
    ),
)


def _check(name: str, render: Callable[[str, str], str], material: str, ask: str) -> None:
    out = check_layout(name, render, material, ask)
    assert isinstance(out, str), name
    assert "\n".join(ask.strip().split("\n")) in out, f"{name}: ask not kept whole"


def _main() -> None:
    assert len(BLIND) == 8
    assert len({name for name, _, _ in BLIND}) == 8
    for name, _description, render in BLIND:
        for material in _SAMPLE_MATERIALS:
            for ask in (*_SAMPLE_ASKS, "line one of a pasted ask\nline two of it"):
                _check(name, render, material, ask)
    chunks = _chunks(_SAMPLE_MATERIALS[1], 3)
    assert all(not c.endswith(("Dr.", "Jr.", "U.S.", "e.g.", "Mar.")) for c in chunks), chunks
    assert len(_chunks(_SAMPLE_MATERIALS[2], 3)) == 3
    print("ok")


if __name__ == "__main__":
    _main()
