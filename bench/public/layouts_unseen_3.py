"""Prompt layouts written blind (the fifth set): by someone who had not read the engine.

They were written to the brief (realistic, varied, every word of the material and the ask
kept in order; no existing template copied) by someone who had read neither the engine nor
any earlier layout, after the engine's last change. Their first measurement is in the
history of ``bench/results/public_eval_layouts.json``; the engine was then improved on what
their dev half showed (a note's "status: draft" taken for a request to write, a role named
inside a sentence taken for a speaker's turn), so they are no longer unseen:
``layouts_unseen_4`` is.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable

from bench.public.layout_checks import check_layout

_ABBREVIATIONS = frozenset(
    {
        "dr.",
        "mr.",
        "mrs.",
        "ms.",
        "st.",
        "jr.",
        "sr.",
        "prof.",
        "vs.",
        "etc.",
        "e.g.",
        "i.e.",
        "inc.",
        "co.",
        "no.",
        "u.s.",
        "u.k.",
        "mt.",
        "gen.",
        "gov.",
    }
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _paragraphs(text: str) -> list[str]:
    """Split on blank lines, keeping every non-empty paragraph as it was."""
    return [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]


def _sentences(paragraph: str) -> list[str]:
    """Split a paragraph at sentence ends, not after common abbreviations or initials."""
    out: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(paragraph):
        head = paragraph[start : match.start()]
        last = head.split()[-1] if head.split() else ""
        if last.lower() in _ABBREVIATIONS or re.fullmatch(r"[A-Z]\.", last):
            continue
        out.append(head.strip())
        start = match.end()
    tail = paragraph[start:].strip()
    if tail:
        out.append(tail)
    return out


def _all_sentences(text: str) -> list[str]:
    sentences: list[str] = []
    for paragraph in _paragraphs(text):
        sentences.extend(_sentences(paragraph))
    return sentences


def _slug(text: str, words: int = 6) -> str:
    tokens = re.findall(r"[a-z0-9]+", text.lower())[:words]
    return "-".join(tokens) or "page"


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut + " …"


# 1. Llama-2 chat template flattened into one string by a small RAG service.
def render_llama2_inst_sys_flat(material: str, ask: str) -> str:
    return (
        "<s>[INST] <<SYS>>\n"
        "You are a helpful, respectful and honest assistant. Answer using only the facts "
        "below. If the facts do not contain the answer, say that you don't know instead of "
        "guessing.\n\n"
        f"{material.strip()}\n"
        "<</SYS>>\n\n"
        f"{ask.strip()} [/INST]"
    )


# 2. LlamaIndex-style refine step, with an existing-answer slot still empty.
def render_llamaindex_refine(material: str, ask: str) -> str:
    return (
        "The original query is as follows:\n"
        f"{ask.strip()}\n"
        "We have provided an existing answer: (no answer yet)\n"
        "We have the opportunity to refine the existing answer (only if needed) with some "
        "more context below.\n"
        "------------\n"
        f"{material.strip()}\n"
        "------------\n"
        "Given the new context, refine the original answer to better answer the query. "
        "If the context isn't useful, return the original answer.\n"
        "Refined Answer: "
    )


# 3. Browser extension "ask about this page" side panel.
def render_browser_ask_page(material: str, ask: str) -> str:
    first = _all_sentences(material)[:1]
    title = _short(first[0]) if first else "Untitled"
    url = f"https://reader.example.org/articles/{_slug(material)}"
    return (
        "The user is viewing a web page and has opened the assistant side panel.\n\n"
        "# Page\n"
        f"Title: {title}\n"
        f"URL: {url}\n"
        "Extracted text (reader mode):\n"
        '"""\n'
        f"{material.strip()}\n"
        '"""\n\n'
        "# User\n"
        f"{ask.strip()}\n\n"
        "Respond in the side panel. Ground every claim in the extracted text; if the page "
        "does not say, tell the user the page doesn't cover it."
    )


# 4. Zendesk-style AI macro: ticket fields, then a help-center article.
def render_zendesk_macro(material: str, ask: str) -> str:
    ticket = 40000 + zlib.crc32(ask.encode("utf-8")) % 60000
    return (
        f"Ticket #{ticket}\n"
        "Status: Open | Priority: Normal | Channel: Web form | Group: Tier 1 Support\n"
        "Requester: customer (end-user)\n"
        "Subject: Question from the help widget\n"
        "Description:\n"
        f"{ask.strip()}\n\n"
        "Suggested Help Center article (Knowledge base > General):\n"
        "----- BEGIN ARTICLE BODY -----\n"
        f"{material.strip()}\n"
        "----- END ARTICLE BODY -----\n\n"
        "Macro: Draft public reply\n"
        "Write a friendly public reply to the requester that resolves the description above "
        "using only the article. Do not mention internal notes. Sign off as the Support Team."
    )


# 5. Discord bot: "!ask" command, with the passage attached as a text file preview.
def render_discord_ask_attachment(material: str, ask: str) -> str:
    size_kb = max(1, (len(material.encode("utf-8")) + 1023) // 1024)
    return (
        "#help-desk — message from user reader_42\n"
        f"!ask {ask.strip()}\n"
        f"📎 attachment: notes.txt ({size_kb} KB) — preview:\n"
        "```\n"
        f"{material.strip()}\n"
        "```\n"
        "You are the server's helper bot. Reply in under 2000 characters, no @mentions, "
        "and answer from the attachment."
    )


# 6. Voice assistant: an ASR transcript, with a card's text read aloud line by line.
def render_voice_card_transcript(material: str, ask: str) -> str:
    lines = ["[session transcript — speech recognition, en-US]"]
    seconds = 0.0
    lines.append(f"[00:{int(seconds):02d}.0] SYSTEM (text-to-speech, reading saved card):")
    for sentence in _all_sentences(material):
        seconds += 1.5
        minutes, secs = divmod(int(seconds), 60)
        lines.append(f"[{minutes:02d}:{secs:02d}.{int(seconds * 10) % 10}] TTS: {sentence}")
        seconds += 0.35 * len(sentence.split())
    seconds += 2.0
    minutes, secs = divmod(int(seconds), 60)
    lines.append(f"[{minutes:02d}:{secs:02d}.{int(seconds * 10) % 10}] USER (conf 0.91):")
    lines.append(ask.strip())
    lines.append("[end of utterance]")
    lines.append("")
    lines.append(
        "Reply as the voice assistant: one or two short spoken sentences, no lists or "
        "markup, based on what the card said."
    )
    return "\n".join(lines)


# 7. Obsidian note with YAML properties and a wiki-linked source section (ask first).
def render_obsidian_note(material: str, ask: str) -> str:
    quoted = "\n".join(
        f"> {line}" if line.strip() else ">" for line in material.strip().splitlines()
    )
    return (
        "---\n"
        "tags: [inbox, to-answer]\n"
        "status: draft\n"
        "source: clipped\n"
        "aliases: []\n"
        "---\n"
        "# Open question\n\n"
        f"{ask.strip()}\n\n"
        "## Source\n"
        "From [[Clippings/Reference]]:\n\n"
        f"{quoted}\n\n"
        "## Answer\n"
        "%% Copilot: fill in this section from the quoted source only. %%\n"
    )


# 8. Material split in two, instructions and the ask between the halves.
def render_split_sandwich(material: str, ask: str) -> str:
    sentences = _all_sentences(material)
    half = (len(sentences) + 1) // 2
    first = " ".join(sentences[:half])
    second = " ".join(sentences[half:])
    return (
        f"{first}\n\n"
        "(The text continues after these instructions.)\n"
        "Read all of the text, including the part that follows, then respond to:\n"
        f"{ask.strip()}\n"
        "Keep your response faithful to the text.\n\n"
        f"{second}"
    ).rstrip() + "\n"


BLIND: tuple[tuple[str, str, Callable[[str, str], str]], ...] = (
    (
        "llama2_inst_sys_flat",
        "Llama-2/Mistral chat template flattened to one string: unlabeled facts in <<SYS>>",
        render_llama2_inst_sys_flat,
    ),
    (
        "llamaindex_refine",
        "LlamaIndex-style refine prompt: query first, empty existing answer, context after",
        render_llamaindex_refine,
    ),
    (
        "browser_ask_page",
        "browser extension 'ask about this page': title, URL, reader-mode text, then question",
        render_browser_ask_page,
    ),
    (
        "zendesk_macro",
        "Zendesk-style AI macro: ticket fields and description, help-center article after",
        render_zendesk_macro,
    ),
    (
        "discord_ask_attachment",
        "Discord bot '!ask' command with the passage as an unlabeled attachment preview",
        render_discord_ask_attachment,
    ),
    (
        "voice_card_transcript",
        "voice assistant ASR transcript: a saved card read aloud by sentence, then the user",
        render_voice_card_transcript,
    ),
    (
        "obsidian_note",
        "Obsidian note: YAML properties, question first, source quoted under a wiki-link",
        render_obsidian_note,
    ),
    (
        "split_sandwich",
        "unlabeled material split in two halves with instructions and the ask in between",
        render_split_sandwich,
    ),
)


_SAMPLE_MATERIALS: tuple[str, ...] = (
    "The Martian is starring Matt Damon",
    (
        "Iron Man is a 2008 American superhero film directed by Jon Favreau.It stars Robert "
        "Downey Jr. as Tony Stark. Dr. Anjali Mehta, a film historian at St. Xavier's College, "
        "said the film (released May 2, 2008) e.g. revived the U.S. superhero genre. "
        "Was it a hit? Yes! It grossed over $585 million."
    ),
    (
        "MUMBAI (Reuters) - The Oberoi Group, the Indian luxury hotel operator founded in 1934 "
        "by Mohan Singh Oberoi, said on Tuesday it would open four new properties over the "
        "next three years, betting on a sustained rebound in domestic and international "
        "travel.\n\n"
        "The company, which runs hotels under the Oberoi and Trident brands, said two of the "
        "new hotels would be in India, one in Saudi Arabia and one in Egypt. Executive "
        "chairman Arjun Oberoi told reporters the group expected occupancy across its "
        "portfolio to exceed 75% this fiscal year, up from roughly 68% a year earlier. "
        '"Demand has outpaced what anyone forecast," he said. "We are seeing guests who used '
        'to travel abroad discover destinations at home."\n\n'
        "Analysts at Kotak Institutional Equities said the expansion plan was in line with "
        "expectations but warned that rising construction costs and a shortage of trained "
        "staff could squeeze margins. Shares of EIH Ltd., the listed flagship of the group, "
        "rose 2.3% in Mumbai trading after the announcement, outperforming a flat broader "
        "market. The stock has gained nearly 40% since January.\n\n"
        "Mr. Oberoi also said the company would invest about 12 billion rupees ($145 million) "
        "in renovating older properties, including its flagship hotel in New Delhi, which "
        "closed for a two-year refurbishment in 2018. The renovation program is expected to "
        "be funded from internal accruals and modest borrowing, he said, adding that the "
        "company's debt levels remained comfortable.\n\n"
        "India's hotel industry was among the hardest hit by the COVID-19 pandemic, with "
        "lockdowns and travel restrictions pushing occupancy to record lows in 2020 and 2021. "
        "Since then, a surge in weddings, corporate events and leisure travel has driven room "
        "rates to historic highs in major cities such as Mumbai, Delhi and Bengaluru. Rivals "
        "including Indian Hotels Co., which operates the Taj brand, and ITC Hotels have also "
        "announced aggressive expansion plans. Industry consultancy HVS Anarock estimates "
        "that India will need more than 100,000 additional branded rooms by 2030 to keep pace "
        "with demand.\n\n"
        "The Oberoi Group employs more than 12,000 people and operates 32 hotels and two "
        "river cruise ships in seven countries. It was ranked among the world's best hotel "
        "groups in several traveller surveys last year. The company did not disclose the "
        "exact locations or opening dates of the new hotels, saying details would be shared "
        "once agreements with local partners were finalised. Separately, the group said it "
        "had appointed a new chief operating officer, Vikram Oberoi, effective April 1, to "
        "oversee day-to-day operations of its hotels and resorts worldwide."
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
    "[Human]: Do you like Iron Man\n[Assistant]: Sure do!\n[Human]: Who else stars in it?",
)


def _main() -> None:
    assert len(BLIND) == 8
    assert len({name for name, _, _ in BLIND}) == 8
    for name, _description, render in BLIND:
        for material in _SAMPLE_MATERIALS:
            for ask in _SAMPLE_ASKS:
                check_layout(name, render, material, ask)
    print("ok")


if __name__ == "__main__":
    _main()
