"""Prompt layouts written blind (the first set): by someone who had not read the engine.

They were written to a brief (realistic, varied, every word of the material and the ask
kept in order; no existing template copied) without access to ``workers/`` or to
``bench.public.layouts``, after the engine was first written. Their first measurement is in
the history of ``bench/results/public_eval_layouts.json``; the engine was then improved on
what their dev half showed (lines of markup, nested tags, bracketed labels, a question
without its mark, a line as a unit), so they are no longer unseen: ``layouts_unseen`` is.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"'\u201d\u2019)]))\s+(?=[\"'(\[A-Z0-9])")


def _sentences(material: str) -> list[str]:
    """Split material at sentence ends, keeping every word and dropping nothing."""
    pieces = [p.strip() for p in _SENTENCE_END.split(material.strip())]
    return [p for p in pieces if p] or [material.strip()]


def _indent(text: str, prefix: str) -> str:
    """Prefix every line of text, including blank ones, with the given prefix."""
    lines = text.splitlines()
    return "\n".join(prefix + line if line.strip() else prefix.rstrip() for line in lines)


def _flat(text: str) -> str:
    """Collapse internal newlines so the text fits on one table or log line."""
    return " ".join(text.split())


def render_chat_roles_flattened(material: str, ask: str) -> str:
    """Render a flattened chat request: material in the system turn, ask in the user turn."""
    return (
        "<<SYS_TURN role=system>>\n"
        "You are Quill, the in-app assistant for Northwind Reader. Keep replies friendly and "
        "brief. You cannot browse the web. When the reader's turn depends on facts, take them "
        "from the reference notes loaded for this session and say so if they do not cover it.\n"
        "\n"
        "Reference notes loaded for this session (source: reader_library/item_0412):\n"
        f"{material.strip()}\n"
        "<<END_TURN>>\n"
        "<<SYS_TURN role=user>>\n"
        f"{ask.strip()}\n"
        "<<END_TURN>>\n"
        "<<SYS_TURN role=assistant>>\n"
    )


def render_markdown_brief(material: str, ask: str) -> str:
    """Render a Markdown brief with the ask on top and the material as nested bullets."""
    bullets = "\n".join(f"  - {_flat(s)}" for s in _sentences(material))
    return (
        "# Editorial desk: response brief\n"
        "\n"
        "> **Request from the front desk**\n"
        f"> {_flat(ask)}\n"
        "\n"
        "## Working notes\n"
        "\n"
        "### Scope\n"
        "- Reply in plain language, no headings in the reply itself.\n"
        "- Do not pull in facts that are not listed under *Source extract*.\n"
        "\n"
        "### Source extract\n"
        "- Extract 1 (verbatim, sentence per bullet)\n"
        f"{bullets}\n"
        "\n"
        "### Status\n"
        "- [ ] draft reply\n"
        "- [ ] second read\n"
    )


def render_yaml_front_matter(material: str, ask: str) -> str:
    """Render a page whose YAML front matter holds the ask and whose body is the material."""
    return (
        "---\n"
        "layout: qa-card\n"
        "lang: en\n"
        "created: 2024-03-18T09:41:07Z\n"
        "reviewer: m.okafor\n"
        "prompt: >-\n"
        f"{_indent(ask.strip(), '  ')}\n"
        "expected_length: short\n"
        "tags: [reading-comprehension, grounded]\n"
        "---\n"
        "\n"
        f"{material.strip()}\n"
    )


def render_email_thread(material: str, ask: str) -> str:
    """Render a top-posted email reply holding the ask above the quoted material."""
    quoted = _indent(material.strip(), "> > ")
    return (
        "From: Dana Whitfield <dana.whitfield@harborline.example>\n"
        "To: Research Assistant <assist@harborline.example>\n"
        "Date: Tue, 9 Apr 2024 16:02:55 +0100\n"
        "Subject: Re: Fwd: background for Thursday\n"
        "\n"
        "Hi,\n"
        "\n"
        "Could you take this one for me before the call? Here is what I need:\n"
        "\n"
        f"{ask.strip()}\n"
        "\n"
        "Please only go by what Luis sent below, we can't cite anything else yet.\n"
        "\n"
        "Thanks,\n"
        "Dana\n"
        "\n"
        "On Mon, 8 Apr 2024 at 11:17, Luis Ferreira <l.ferreira@harborline.example> wrote:\n"
        "> Dana, forwarding the piece we talked about. Pasting it in full so nobody has to\n"
        "> dig through the shared drive.\n"
        ">\n"
        "> ---------- Forwarded message ---------\n"
        "> Subject: background for Thursday\n"
        ">\n"
        f"{quoted}\n"
        ">\n"
        "> Luis\n"
    )


def render_ticket_export(material: str, ask: str) -> str:
    """Render a ticket export with the material in the description and the ask in a comment."""
    return (
        "=== TICKET EXPORT ===\n"
        "Key: CS-20931\n"
        "Status: Waiting for support\n"
        "Priority: P3\n"
        "Queue: Tier-1 / Knowledge\n"
        "Reporter: jsantos (customer)\n"
        "Assignee: auto-responder\n"
        "Created: 2024-05-02 08:14 UTC\n"
        "Labels: kb-article, needs-answer\n"
        "\n"
        "--- Description ---\n"
        "Customer pasted the following text when opening the ticket:\n"
        "\n"
        f"{_indent(material.strip(), '    ')}\n"
        "\n"
        "--- Activity (oldest first) ---\n"
        "[2024-05-02 08:15 UTC] system: Ticket routed to Tier-1 / Knowledge.\n"
        "[2024-05-02 08:31 UTC] jsantos: Following up with what I actually need.\n"
        f"[2024-05-02 08:32 UTC] jsantos: {_flat(ask)}\n"
        "\n"
        "--- Draft response (auto-responder) ---\n"
    )


def render_html_widget(material: str, ask: str) -> str:
    """Render an HTML widget page with the ask in a query card above the material."""
    paragraphs = "\n".join(f"      <p>{_flat(s)}</p>" for s in _sentences(material))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n'
        '<head><meta charset="utf-8"><title>Ask the page</title></head>\n'
        "<body>\n"
        '  <header class="widget-bar"><span class="brand">PageHelper</span></header>\n'
        '  <div class="query-card" data-source="visitor">\n'
        '    <label for="q">Visitor typed:</label>\n'
        f'    <div id="q" class="query-text">{_flat(ask)}</div>\n'
        "  </div>\n"
        "  <main>\n"
        '    <article id="page-content" data-captured="2024-06-11">\n'
        f"{paragraphs}\n"
        "    </article>\n"
        "  </main>\n"
        "  <footer><small>Answer using the page content only.</small></footer>\n"
        "</body>\n"
        "</html>\n"
    )


def render_rules_then_inline(material: str, ask: str) -> str:
    """Render a rule block, then the material introduced mid-sentence, then the ask."""
    return (
        "This is an assessment item for the grounded-writing track. The reply is read by a "
        "grader who has the same source in front of them. The reply must be short. The reply "
        "is written in English. Lists are not allowed. Quotes from the source are allowed but "
        "must not run longer than one sentence. Opinions of the writer are not part of a good "
        "reply. A reply that brings in outside knowledge is marked down even when it is true. "
        "When the source does not settle something, the reply says that plainly.\n"
        "\n"
        "For this item the grader handed over a source that reads, in full, "
        f"{_flat(material)} \u2014 "
        "and nothing else is to be treated as known. The candidate now receives the following "
        f"and responds to it: {ask.strip()}\n"
    )


def render_reranker_topk(material: str, ask: str) -> str:
    """Render a retrieval log: the query, then reranked top-k chunks of material with scores."""
    chunks = _sentences(material)
    lines = []
    for rank, chunk in enumerate(chunks, start=1):
        score = max(0.05, 0.97 - 0.06 * (rank - 1))
        lines.append(
            f"#{rank:<2} score={score:.3f} doc=src-7f3a chunk={rank - 1:03d} | {_flat(chunk)}"
        )
    hits = "\n".join(lines)
    return (
        "[retriever] index=kb-prod-2024w19 embed=e5-base k=50\n"
        "[reranker] model=cross-enc-v3 kept=top-k\n"
        f"[query] {_flat(ask)}\n"
        "[hits]\n"
        f"{hits}\n"
        "[generator] respond to [query] using [hits]; cite chunk ids when helpful.\n"
    )


#: (name, where such a layout is seen, render).
BLIND: tuple[tuple[str, str, Callable[[str, str], str]], ...] = (
    (
        "chat_roles_flattened",
        "Chat-completion request logged as text with custom role markers, material in system.",
        render_chat_roles_flattened,
    ),
    (
        "markdown_brief",
        "Markdown task brief in a team wiki or issue, ask as a blockquote above bullet sources.",
        render_markdown_brief,
    ),
    (
        "yaml_front_matter",
        "Static-site or dataset card file: ask in YAML front matter, material as the body.",
        render_yaml_front_matter,
    ),
    (
        "email_thread",
        "Top-posted email reply asking a colleague, with the material in a nested quote.",
        render_email_thread,
    ),
    (
        "ticket_export",
        "Helpdesk/Jira-style ticket export with pasted article and the ask in the activity log.",
        render_ticket_export,
    ),
    (
        "html_widget",
        "HTML captured by an on-page help widget: query card above the article paragraphs.",
        render_html_widget,
    ),
    (
        "rules_then_inline",
        "Exam/eval item: rules stated as facts, source introduced mid-sentence, ask last.",
        render_rules_then_inline,
    ),
    (
        "reranker_topk",
        "RAG pipeline debug log: query line, then reranked top-k chunks with scores.",
        render_reranker_topk,
    ),
)
