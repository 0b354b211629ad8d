"""What every layout set checks of itself: a renderer keeps the input's words, in order.

Each blind set was written by someone who had seen no other, and each wrote this check;
it is kept once here. A set may check more of its own layouts on top of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Render = Callable[[str, str], str]


def words_in_order(needle: Sequence[str], haystack: Sequence[str]) -> bool:
    """Whether ``needle`` is a subsequence of ``haystack`` (its items in order, gaps allowed)."""
    rest = iter(haystack)
    return all(word in rest for word in needle)


def check_layout(name: str, render: Render, material: str, ask: str) -> str:
    """The rendered prompt, asserted the same twice and holding both inputs' words in order."""
    out = render(material, ask)
    assert out == render(material, ask), f"{name}: not deterministic"
    words = out.split()
    assert words_in_order(material.split(), words), f"{name}: material words lost or reordered"
    assert words_in_order(ask.split(), words), f"{name}: ask words lost or reordered"
    return out
