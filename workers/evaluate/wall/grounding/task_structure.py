"""What a task's blocks say together: worked examples before the item, and chat messages.

A few-shot prompt shows a worked example in the very fields the real item uses ("SOURCE:",
"INPUT:", "REPLY:" once filled in, then again with the reply left empty). The example's
passage is not what the node was given, and its reply is not what it was asked: only the
last round of the fields is the node's item. A chat template heads each message with its
role ("user:" on its own line); two or more messages of a conversation are a dialogue,
one user message is just the ask.
"""

from __future__ import annotations

from collections.abc import Sequence

from workers.evaluate.wall.grounding.task_blocks import Block

#: Roles whose messages are a conversation (a system or developer message is instructions).
CONVERSATION_ROLES = frozenset({"user", "human", "assistant", "ai", "bot", "model", "customer"})
#: Roles whose message instructs the conversation that follows it.
INSTRUCTION_ROLES = frozenset({"system", "developer"})


def without_examples(blocks: Sequence[Block]) -> list[Block]:
    """The blocks with the worked examples that come before the real item left out.

    The item's answer slot is a label whose last use is empty while an earlier use is
    filled in; the item is the last round of fields, from the last use of the label that
    opens it. Blocks before the first example (the instructions) stay.
    """
    labels = [b.label for b in blocks]
    for slot in _empty_slots(blocks):
        filled = [i for i, b in enumerate(blocks) if b.label == slot and b.text.strip()]
        last_filled = filled[-1]
        item = blocks[last_filled + 1 :]
        opening = next((b.label for b in item if b.label and b.label != slot), None)
        if opening is None or opening not in labels[: last_filled + 1]:
            continue
        first = labels.index(opening)
        return [*blocks[:first], *item]
    return list(blocks)


def _empty_slots(blocks: Sequence[Block]) -> list[str]:
    """Labels whose last use is an empty block, filled in at least once before it."""
    found = []
    for i, block in enumerate(blocks):
        if not block.label or block.text.strip() or block.label in CONVERSATION_ROLES:
            continue
        if any(b.label == block.label and b.text.strip() for b in blocks[:i]):
            if all(b.label != block.label for b in blocks[i + 1 :]):
                found.append(block.label)
    return found


def as_turns(blocks: Sequence[Block]) -> list[Block]:
    """Chat messages written as turns when two or more make a conversation.

    One user message under its header is the ask as it stands; a user and an assistant
    message (or more) are a dialogue so far, and read as one ("User: ... Assistant: ...").
    """
    # A system message opens the conversation: a role's name before it is not one of its
    # messages (a logged request's "model: gpt-4o-mini  temperature: 0.2" is a setting).
    opened = next((i for i, b in enumerate(blocks) if b.label in INSTRUCTION_ROLES), 0)
    talk = [b for b in blocks[opened:] if b.label in CONVERSATION_ROLES and b.text.strip()]
    if len(talk) < 2:
        return list(blocks)
    turns = " ".join(f"{b.label.capitalize()}: {b.text.strip()}" for b in talk)
    first = blocks.index(talk[0])
    rest = [b for b in blocks if b not in talk]
    return [*rest[:first], Block(turns), *rest[first:]]
