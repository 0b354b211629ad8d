"""Prompt layouts written blind (the sixth set): never looked at while the engine was built.

They were written to the brief (realistic, varied, every word of the material and the ask kept in
order; no existing template copied) by someone who had read neither the engine nor any earlier
layout, after the engine's last change, added once and reported as they came out.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bench.public.layout_checks import check_layout

_ABBREVIATIONS: frozenset[str] = frozenset(
    {
        "dr.",
        "mr.",
        "mrs.",
        "ms.",
        "prof.",
        "st.",
        "jr.",
        "sr.",
        "inc.",
        "ltd.",
        "co.",
        "corp.",
        "vs.",
        "etc.",
        "incl.",
        "e.g.",
        "i.e.",
        "no.",
        "mt.",
        "gen.",
        "sen.",
        "rep.",
        "gov.",
        "jan.",
        "feb.",
        "aug.",
        "sept.",
        "oct.",
        "nov.",
        "dec.",
    }
)


def _paragraphs(material: str) -> list[str]:
    """Split the material at blank lines, keeping every non-empty paragraph."""
    parts = [p.strip() for p in re.split(r"\n\s*\n", material.strip())]
    return [p for p in parts if p]


def _sentences(text: str) -> list[str]:
    """Split text at sentence ends (whitespace after . ! ?), skipping common abbreviations."""
    words = text.split()
    out: list[str] = []
    current: list[str] = []
    for word in words:
        current.append(word)
        bare = word.rstrip("\"')]”’")
        if not bare.endswith((".", "!", "?")):
            continue
        low = bare.lower()
        if low in _ABBREVIATIONS or re.fullmatch(r"(?:[a-z]\.)+", low):
            continue
        out.append(" ".join(current))
        current = []
    if current:
        out.append(" ".join(current))
    return out


def _chunks(material: str, size: int = 2) -> list[str]:
    """Group sentences into chunks of ``size`` sentences, never crossing a paragraph break."""
    chunks: list[str] = []
    for para in _paragraphs(material):
        sents = _sentences(para)
        for i in range(0, len(sents), size):
            chunks.append(" ".join(sents[i : i + size]))
    return chunks or [material.strip()]


def _slug(text: str, limit: int = 6) -> str:
    """Build a short deterministic slug from the first few alphanumeric words of text."""
    words = re.findall(r"[A-Za-z0-9]+", text)[:limit]
    return "-".join(w.lower() for w in words) or "untitled"


def _stable_id(text: str, width: int = 8) -> str:
    """Return a deterministic hex id derived from the text (no hashing salt involved)."""
    acc = 2166136261
    for ch in text.encode("utf-8"):
        acc = ((acc ^ ch) * 16777619) & 0xFFFFFFFF
    return f"{acc:0{width}x}"[:width]


# 1. AWS Bedrock Knowledge Base, retrieve-and-generate, with $search_results$ already filled in.
def render_bedrock_kb_retrieve_generate(material: str, ask: str) -> str:
    """Render a Bedrock-style orchestration prompt whose search results are the material."""
    results: list[str] = []
    for i, chunk in enumerate(_chunks(material, size=3), start=1):
        results.append(
            "<search_result>\n"
            f"<source>s3://kb-corpus-prod/ingest/doc-{_stable_id(material)}.txt#chunk={i}</source>\n"
            f"<content>\n{chunk}\n</content>\n"
            "</search_result>"
        )
    return (
        "You are a question answering agent. I will provide you with a set of search results. "
        "The user will provide you with a question. Your job is to answer the user's question "
        "using only information from the search results. If the search results do not contain "
        "information that can answer the question, please state that you could not find an "
        "exact answer to the question. Just because the user asserts a fact does not mean it "
        "is true, make sure to double check the search results to validate a user's assertion.\n"
        "\n"
        "Here are the search results in numbered order:\n"
        "<search_results>\n" + "\n".join(results) + "\n</search_results>\n"
        "\n"
        "Here is the user's question:\n"
        f"<question>\n{ask}\n</question>\n"
        "\n"
        "$output_format_instructions$ were not configured for this knowledge base.\n"
        "\n"
        "Assistant:"
    )


# 2. ChatML flattened into one string (the way a raw-completion proxy forwards it).
def render_chatml_flattened(material: str, ask: str) -> str:
    """Render a flattened ChatML transcript; the material sits unlabeled in the system turn."""
    return (
        "<|im_start|>system\n"
        "You are a helpful assistant. Answer from the reference text below and nothing else. "
        "Keep it short.\n"
        "\n"
        f"{material.strip()}\n"
        "<|im_end|>\n"
        "<|im_start|>user\n"
        f"{ask}\n"
        "<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


# 3. RSS reader "summarize this item" with feed metadata; item body pasted without a label.
def render_rss_reader_item(material: str, ask: str) -> str:
    """Render an RSS reader's per-item AI action with the feed header and the raw item body."""
    first = _sentences(_paragraphs(material)[0])[0] if material.strip() else ""
    title = " ".join(first.split()[:10])
    body = "\n\n".join(_paragraphs(material))
    return (
        "Feed: World Desk — Top Stories (rss)\n"
        "Feed URL: https://feeds.example-news.net/world/top.xml\n"
        f"Item GUID: urn:item:{_stable_id(material)}\n"
        f"Item link: https://example-news.net/world/{_slug(material)}\n"
        f"Title (auto): {title}…\n"
        "Unread: yes · Starred: no · Folder: News\n"
        "----------------------------------------\n"
        f"{body}\n"
        "----------------------------------------\n"
        "Reader action › AI assist\n"
        f"{ask}\n"
        "(Reply in plain text, no markdown headings; the reader pane is narrow.)"
    )


# 4. Jira Service Management request: the ask is the summary line, the material is quoted below.
def render_jira_service_request(material: str, ask: str) -> str:
    """Render a JSM ticket export where the ask comes first and the material is a quoted note."""
    quoted = "\n".join(
        ("> " + line) if line.strip() else ">" for line in material.strip().splitlines()
    )
    key = f"HELP-{int(_stable_id(material + ask, 4), 16) % 9000 + 1000}"
    return (
        f"[{key}] Service request — Knowledge question\n"
        "Request type: Ask a question\n"
        "Reporter: customer portal user · Priority: Medium · Status: Waiting for support\n"
        "\n"
        "Summary:\n"
        f"{ask}\n"
        "\n"
        "Description:\n"
        "Customer attached the following excerpt from our knowledge base and wants the summary "
        "above handled using it.\n"
        "\n"
        "{quote}\n"
        f"{quoted}\n"
        "{quote}\n"
        "\n"
        "Agent assist (Atlassian Intelligence): draft a reply to the customer based only on "
        "the quoted excerpt. Do not promise timelines. Sign off as the Service Desk team."
    )


# 5. Perplexity-style answer engine: numbered sources, query in the middle, citation rules last.
def render_answer_engine_sources(material: str, ask: str) -> str:
    """Render an answer-engine prompt with numbered sources and trailing citation instructions."""
    sources = "\n\n".join(
        f"[{i}] source: web result {i} (snippet)\n{chunk}"
        for i, chunk in enumerate(_chunks(material, size=2), start=1)
    )
    return (
        "# Sources\n"
        f"{sources}\n"
        "\n"
        "# Query\n"
        f"{ask}\n"
        "\n"
        "# Instructions\n"
        "- Write an accurate, concise answer to the query using the sources above.\n"
        "- Cite every sentence that relies on a source with its number in brackets, like [1] "
        "or [2][3], placed right after the sentence they support.\n"
        "- If the sources do not answer the query, say so in one sentence.\n"
        "- Do not mention these instructions. Answer in the language of the query."
    )


# 6. Spreadsheet "row to prompt": several columns of one row filled into a template.
def render_spreadsheet_row(material: str, ask: str) -> str:
    """Render an Excel/Sheets add-in prompt built from one row's named columns."""
    row = int(_stable_id(material, 3), 16) % 400 + 2
    task_kind = "summary" if ask.rstrip().endswith(".") and "?" not in ask else "qa"
    return (
        f"Sheet: eval_batch_07 · Row {row} · Columns A–F\n"
        "\n"
        f"A  row_id: r{row:04d}\n"
        f"B  task_type: {task_kind}\n"
        "C  language: en\n"
        "D  context:\n"
        f"{material.strip()}\n"
        "E  prompt:\n"
        f"{ask}\n"
        "F  max_words: 120\n"
        "\n"
        '=AI.GENERATE("Use column D (context) to respond to column E (prompt). '
        'Respect F. Output only the response text.")'
    )


# 7. Notion AI "Ask AI" on a page: the page blocks are pasted with no label at all.
def render_notion_ask_ai(material: str, ask: str) -> str:
    """Render a Notion-like page dump followed by the Ask AI box contents."""
    blocks = "\n\n".join(_paragraphs(material)) or material
    return (
        "📄 Research notes / Reference\n"
        "Created by: workspace member · Tags: reading, to-verify\n"
        "\n"
        f"{blocks}\n"
        "\n"
        "———\n"
        "✨ Ask AI (scope: this page)\n"
        f"{ask}\n"
        "\n"
        "Respond as a Notion AI block: plain prose, at most a short paragraph, grounded in the "
        "page above."
    )


# 8. A LangSmith trace copied as plain text: nested runs with names, inputs buried inside.
def render_langsmith_trace_text(material: str, ask: str) -> str:
    """Render a plain-text copy of a traced chain run; retrieved docs and the ask sit inside."""
    docs = "\n".join(
        f"      - page_content: {chunk}\n        metadata: {{source: kb, chunk: {i}}}"
        for i, chunk in enumerate(_chunks(material, size=4))
    )
    run = _stable_id(ask + material, 8)
    return (
        f"Trace {run}-…  project: support-bot-prod  status: success\n"
        "\n"
        "▸ RunnableSequence (chain)\n"
        "  ▸ retrieve_context (retriever)\n"
        "    inputs:\n"
        f"      query: {ask}\n"
        "    outputs:\n"
        "      documents:\n"
        f"{docs}\n"
        "  ▸ format_prompt (prompt)\n"
        "  ▸ ChatOpenAI (llm)  ← replay this step\n"
        "    messages[0] system: Answer the user using only the retrieved documents. If they "
        "don't contain the answer, say you don't know.\n"
        "    messages[1] human: (see retrieve_context.inputs.query)\n"
        "    outputs: <to be generated>"
    )


BLIND: tuple[tuple[str, str, Callable[[str, str], str]], ...] = (
    (
        "bedrock_kb_retrieve_generate",
        "AWS Bedrock Knowledge Base retrieve-and-generate prompt with $search_results$ filled in",
        render_bedrock_kb_retrieve_generate,
    ),
    (
        "chatml_flattened",
        "ChatML <|im_start|> turns flattened into one string; material unlabeled in system turn",
        render_chatml_flattened,
    ),
    (
        "rss_reader_item",
        "RSS reader 'AI assist' on an item: feed metadata header, unlabeled item body, then ask",
        render_rss_reader_item,
    ),
    (
        "jira_service_request",
        "Jira Service Management ticket: ask as the Summary up top, material quoted in Description",
        render_jira_service_request,
    ),
    (
        "answer_engine_sources",
        "Perplexity-style answer engine: numbered sources, the query, then citation instructions",
        render_answer_engine_sources,
    ),
    (
        "spreadsheet_row",
        "Excel/Sheets row-to-prompt: columns A–F (id, type, lang, context, prompt, max words)",
        render_spreadsheet_row,
    ),
    (
        "notion_ask_ai",
        "Notion 'Ask AI' on a page: page blocks pasted without a label, then the Ask AI box",
        render_notion_ask_ai,
    ),
    (
        "langsmith_trace_text",
        "LangSmith trace copied as plain text: run names, query input, retrieved page_content",
        render_langsmith_trace_text,
    ),
)


_NEWS = """\
HARBOR CITY — The city council voted 7-2 on Tuesday night to approve a $48 million plan to \
rebuild the aging Eastside seawall, ending more than two years of debate over how to protect \
the waterfront neighborhood from rising tides and increasingly frequent storm surges.

The plan, drafted by the Department of Public Works with help from engineers at Coastal \
Dynamics Inc., replaces roughly 1.2 miles of crumbling concrete with a tiered structure that \
includes a raised promenade, planted terraces and a series of tidal pools. Supporters said the \
design would both hold back water and give residents a new public space. "This is not just a \
wall, it is a park that happens to keep our basements dry," said Councilmember Rosa Delgado, \
who represents the district and has pushed for the project since 2021.

Opponents focused on the cost. Councilmember Henry Oduya, one of the two no votes, said the \
city had not secured enough federal matching funds and warned that the budget could balloon. \
"We have seen what happens when big infrastructure projects start without the money in hand," \
he said, pointing to the long-delayed light rail extension. The city's finance office estimates \
that about 40 percent of the cost will be covered by state and federal grants, with the rest \
paid for through a bond measure that voters approved in 2022.

Residents who spoke during the four-hour public comment period were largely in favor. Several \
described flooding in their homes during the January storms, when water topped the existing \
wall in at least six places. Mr. Alan Whitfield, who has owned a hardware store on Front St. \
for 31 years, said he lost nearly $20,000 in inventory. "I am tired of mopping," he told the \
council. Others raised concerns about construction noise and the temporary closure of the \
waterfront bike path, which is expected to last about 18 months.

Construction is scheduled to begin in the spring and be completed by late 2027, according to \
the Public Works timeline. The department said it would phase the work so that no more than \
a quarter mile of the waterfront is closed at any given time. Dr. Priya Nandakumar, a coastal \
engineer at the state university who reviewed the design, called it "a sensible middle path" \
between a simple higher wall and a full managed retreat from the shoreline.

The council also approved a separate measure directing staff to study a flood insurance \
assistance program for low-income homeowners in the district. A report is due back in six \
months. Mayor Denise Park, who had endorsed the seawall plan, is expected to sign both \
measures later this week."""

_MATERIALS: tuple[str, ...] = (
    "The Martian is starring Matt Damon",
    "Iron Man is a 2008 American superhero film directed by Jon Favreau.It stars Robert Downey "
    "Jr. as Tony Stark. The film was praised by critics, incl. Dr. Anjali Mehta of the U.S. "
    "Film Institute, who called it a turning point for the genre! Was it a hit? Yes: it "
    "grossed over $585 million worldwide.",
    _NEWS,
)

_ASKS: tuple[str, ...] = (
    "Who directed Iron Man?",
    "when was the Oberoi Group founded",
    "Summarize the document in a few sentences.",
    "[Human]: Do you like Iron Man [Assistant]: Sure do! Robert Downey Jr. is great in it. "
    "[Human]: Who else stars in it?",
    "[Human]: Do you like Iron Man\n[Assistant]: Sure do!\n[Human]: Who else stars in it?",
)


if __name__ == "__main__":
    assert len(BLIND) == 8
    assert len({name for name, _, _ in BLIND}) == 8
    assert 2500 <= len(_NEWS) <= 3500, len(_NEWS)
    for _name, _desc, _render in BLIND:
        for _material in _MATERIALS:
            for _ask in _ASKS:
                check_layout(_name, _render, _material, _ask)
    print("ok")
