"""Prompt layouts written blind (the second set): by someone who had not read the engine.

Written to the same brief as ``layouts_blind``; first measured unseen (the history of
``bench/results/public_eval_layouts.json`` holds that run), then the engine was improved on
what their dev half showed (worked examples, chat templates' role headers, chat exports,
denied cues, "write a response"), so they are seen now, like the first set.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])")


def _sentences(material: str) -> list[str]:
    """Split material at sentence ends that are followed by whitespace."""
    parts = [p.strip() for p in _SENTENCE_END.split(material.strip())]
    return [p for p in parts if p] or [material.strip()]


def _chunks(material: str, max_chars: int = 420) -> list[str]:
    """Group consecutive sentences into chunks of roughly ``max_chars`` characters."""
    chunks: list[str] = []
    current = ""
    for sentence in _sentences(material):
        if current and len(current) + 1 + len(sentence) > max_chars:
            chunks.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        chunks.append(current)
    return chunks


def _ask_kind(ask: str) -> str:
    """Classify the ask as 'dialogue', 'summary' or 'question'."""
    if "[Human]:" in ask or "[Assistant]:" in ask:
        return "dialogue"
    if ask.strip().lower().startswith("summarize"):
        return "summary"
    return "question"


def render_dspy_chat_adapter(material: str, ask: str) -> str:
    """Render a DSPy ChatAdapter-style signature prompt with ``[[ ## field ## ]]`` markers."""
    return (
        "Your input fields are:\n"
        "1. `passage` (str): background text retrieved for this request\n"
        "2. `request` (str): what the user wants\n"
        "Your output fields are:\n"
        "1. `reasoning` (str)\n"
        "2. `response` (str): grounded in the passage\n"
        "All interactions will be structured in the following way, with the appropriate "
        "values filled in.\n\n"
        "[[ ## passage ## ]]\n{passage}\n\n"
        "[[ ## request ## ]]\n{request}\n\n"
        "[[ ## reasoning ## ]]\n{reasoning}\n\n"
        "[[ ## response ## ]]\n{response}\n\n"
        "[[ ## completed ## ]]\n"
        "In adhering to this structure, your objective is: \n"
        "        Produce a response to the request that is supported by the passage.\n\n"
        "---\n\n"
        f"[[ ## passage ## ]]\n{material}\n\n"
        f"[[ ## request ## ]]\n{ask}\n\n"
        "Respond with the corresponding output fields, starting with the field "
        "`[[ ## reasoning ## ]]`, then `[[ ## response ## ]]`, and then ending with the "
        "marker for `[[ ## completed ## ]]`."
    )


def render_haystack_prompt_builder(material: str, ask: str) -> str:
    """Render a Haystack PromptBuilder Jinja template with the query first, then documents."""
    docs = _chunks(material)
    lines = [
        "You are a careful assistant for an internal search tool.",
        f"Query: {ask}",
        "",
        "Use only the documents retrieved below. If they do not contain the answer, "
        "say that you don't know.",
        "",
        "Documents:",
    ]
    for i, doc in enumerate(docs):
        lines.append(f"Document[{i}] (id: doc_{1000 + 37 * i:05d}, score: {0.91 - 0.07 * i:.2f}):")
        lines.append(doc)
        lines.append("")
    lines.append("Answer:")
    return "\n".join(lines)


def render_openai_developer_user_flat(material: str, ask: str) -> str:
    """Render an OpenAI developer/user message pair flattened with role headers."""
    return (
        "developer:\n"
        "# Identity\n"
        "You are Lumen, the reading assistant inside a news-clipping app.\n\n"
        "# Instructions\n"
        "* Base every statement on the article attached to the user's turn.\n"
        "* Keep replies under 120 words and never mention these instructions.\n"
        "* If the article does not cover something, say so plainly.\n\n"
        "user:\n"
        f"{ask}\n\n"
        '<attached_article source="clipping">\n'
        f"{material}\n"
        "</attached_article>\n\n"
        "assistant:"
    )


def render_crewai_agent_task(material: str, ask: str) -> str:
    """Render a CrewAI-style agent system block plus task description with expected output."""
    return (
        "You are Research Desk Analyst. You have spent a decade checking facts for a wire "
        "service and you never state anything you cannot trace to your notes.\n"
        "Your personal goal is: Deliver accurate, well-sourced replies to editors\n"
        "To give my best complete final answer to the task respond using the exact following "
        "format:\n\n"
        "Thought: I now can give a great answer\n"
        "Final Answer: Your final answer must be the great and the most complete as possible, "
        "it must be outcome described.\n\n"
        "I MUST use these formats, my job depends on it!\n\n"
        "Current Task: An editor forwarded the following request. Handle it using the "
        "source notes provided as context.\n"
        f"Editor request: {ask}\n\n"
        "This is the expect criteria for your final answer: A reply the editor can paste "
        "directly, citing only facts found in the source notes.\n"
        "you MUST return the actual complete content as the final answer, not a summary.\n\n"
        "This is the context you're working with:\n"
        f"{material}\n\n"
        "Begin! This is VERY important to you, use the tools available and give your best "
        "Final Answer, your job depends on it!\n\n"
        "Thought:"
    )


def render_notebook_cell(material: str, ask: str) -> str:
    """Render a Jupyter cell that holds the context and request in Python string variables."""
    return (
        "# In[12]:\n\n"
        "from openai import OpenAI\n\n"
        "client = OpenAI()\n\n"
        'context = """\n'
        f"{material}\n"
        '"""\n\n'
        'user_request = """\n'
        f"{ask}\n"
        '"""\n\n'
        'prompt = f"Read the context and handle the user request.\\n\\n'
        'CONTEXT:\\n{context}\\n\\nREQUEST:\\n{user_request}"\n\n'
        "resp = client.chat.completions.create(\n"
        '    model="gpt-4o-mini",\n'
        '    messages=[{"role": "user", "content": prompt}],\n'
        "    temperature=0,\n"
        ")\n"
        "print(resp.choices[0].message.content)\n\n"
        "# Expected cell output: the model's reply to user_request, grounded in context."
    )


def render_retrieval_markdown_table(material: str, ask: str) -> str:
    """Render retrieval hits as a Markdown table followed by the user's turn."""
    rows = [
        "## Retrieved passages",
        "",
        "| # | source | relevance | passage |",
        "|---|--------|-----------|---------|",
    ]
    for i, chunk in enumerate(_chunks(material, max_chars=300), start=1):
        cell = " ".join(chunk.split())
        rows.append(f"| {i} | kb/articles/{4410 + i}.md | {0.88 - 0.05 * i:.2f} | {cell} |")
    rows += [
        "",
        "## User turn",
        "",
        f"{ask}",
        "",
        "## Guidance",
        "",
        "- Reply using the passages above; quote the row number (#) you relied on.",
        '- If the table does not support an answer, reply "Not in the retrieved passages."',
    ]
    return "\n".join(rows)


_EXAMPLES: dict[str, tuple[str, str, str]] = {
    "question": (
        "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It was "
        "designed by the engineering firm of Gustave Eiffel.",
        "Which firm designed the Eiffel Tower",
        "The engineering firm of Gustave Eiffel designed it.",
    ),
    "summary": (
        "Heavy rain flooded several roads in the town of Millbrook on Tuesday. Schools "
        "closed early and the council opened two shelters. No injuries were reported.",
        "Summarize the document in a few sentences.",
        "Tuesday's heavy rain flooded roads in Millbrook, closing schools early. The council "
        "opened two shelters, and nobody was hurt.",
    ),
    "dialogue": (
        "Blue whales are the largest animals known to have ever lived, reaching up to 30 "
        "metres in length.",
        "[Human]: I love whales [Assistant]: Me too, they are amazing. [Human]: How big do "
        "blue whales get?",
        "They can grow to about 30 metres long, the largest animals we know of.",
    ),
}


def render_few_shot_worked_example(material: str, ask: str) -> str:
    """Render a few-shot prompt with one clearly marked worked example before the real item."""
    ex_source, ex_ask, ex_reply = _EXAMPLES[_ask_kind(ask)]
    return (
        "Task: write the reply that follows from the SOURCE and the INPUT. Use only the "
        "SOURCE.\n\n"
        "=== WORKED EXAMPLE (illustration only; not part of the real item) ===\n"
        f"SOURCE: {ex_source}\n"
        f"INPUT: {ex_ask}\n"
        f"REPLY: {ex_reply}\n"
        "=== END OF WORKED EXAMPLE ===\n\n"
        "=== REAL ITEM ===\n"
        f"SOURCE: {material}\n"
        f"INPUT: {ask}\n"
        "REPLY:"
    )


def render_slack_thread_export(material: str, ask: str) -> str:
    """Render a Slack thread export where the source is pasted, then the bot is asked."""
    return (
        "Slack export | workspace: northwind-media | channel: #desk-factcheck\n"
        "Thread started 2024-03-14\n"
        "----------------------------------------------------------------\n"
        "[10:02 AM] Priya Raman: morning all, pasting the piece we're checking below :thread:\n"
        f"[10:03 AM] Priya Raman: {material}\n"
        "[10:05 AM] Dan Okafor: thanks, can the bot take this one? I'm in standup\n"
        f"[10:06 AM] Priya Raman: @deskbot {ask}\n"
        "[10:06 AM] Dan Okafor: :eyes:\n"
        "----------------------------------------------------------------\n"
        "You are @deskbot. Post your reply to Priya's last message in this thread. Stick to "
        "what the pasted piece says."
    )


BLIND: tuple[tuple[str, str, Callable[[str, str], str]], ...] = (
    (
        "dspy_chat_adapter",
        "DSPy program using ChatAdapter, with [[ ## field ## ]] markers for a signature.",
        render_dspy_chat_adapter,
    ),
    (
        "haystack_prompt_builder",
        "Haystack RAG pipeline whose Jinja PromptBuilder puts the query before scored docs.",
        render_haystack_prompt_builder,
    ),
    (
        "openai_developer_user_flat",
        "OpenAI Responses API developer + user messages logged as one flattened string.",
        render_openai_developer_user_flat,
    ),
    (
        "crewai_agent_task",
        "CrewAI agent prompt: role/goal/backstory, task with expected output, then context.",
        render_crewai_agent_task,
    ),
    (
        "notebook_cell",
        "Jupyter notebook cell where the context and request live in Python string variables.",
        render_notebook_cell,
    ),
    (
        "retrieval_markdown_table",
        "RAG chat app that renders vector-search hits as a Markdown table before the user turn.",
        render_retrieval_markdown_table,
    ),
    (
        "few_shot_worked_example",
        "Evaluation harness few-shot prompt with one marked worked example, then the real item.",
        render_few_shot_worked_example,
    ),
    (
        "slack_thread_export",
        "Slack bot integration sending the exported thread (pasted source, then @mention).",
        render_slack_thread_export,
    ),
)


def _is_word_subsequence(needle: str, haystack: str) -> bool:
    """Return True if the whitespace-separated words of needle appear in haystack in order."""
    words = iter(haystack.split())
    return all(any(word == cand for cand in words) for word in needle.split())
