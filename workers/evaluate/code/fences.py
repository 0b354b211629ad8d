"""The fenced code blocks of a markdown or text output, as CommonMark reads them.

markdown-it-py (already the review page's renderer) finds the fences: backticks or
tildes of any length, inside list items and block quotes, an unclosed fence running to the
end. Only the block parser runs, and only when the text holds a fence at all, so an output
without code pays one substring search.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt

from schemas.code import CodeLanguage
from workers.evaluate.code.languages import language_of, tag_of

_CACHE_SIZE = 64


@dataclass(frozen=True, slots=True)
class FencedBlock:
    """One fenced block: where it is, what its tag says, and its code."""

    index: int
    """1-based among the output's fenced blocks."""
    tag: str
    """The info string's first word, lower-cased ('' when untagged)."""
    language: CodeLanguage | None
    """The parser the tag names, or an untagged block's certain language; None: unknown."""
    body: str
    """The code, fence lines excluded (a list item's indentation removed)."""
    start_line: int
    """1-based line of the output on which the code starts."""


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    # The inline rules read prose, which the fences do not need.
    return MarkdownIt("commonmark").disable("inline")


@lru_cache(maxsize=_CACHE_SIZE)
def fenced_blocks(text: str) -> tuple[FencedBlock, ...]:
    """Every fenced block of ``text`` in order; () when there is none."""
    if "```" not in text and "~~~" not in text:
        return ()
    blocks: list[FencedBlock] = []
    for token in _block_parser().parse(text):
        if token.type != "fence" or token.map is None:
            continue
        tag = tag_of(token.info)
        body = token.content
        blocks.append(
            FencedBlock(
                index=len(blocks) + 1,
                tag=tag,
                language=language_of(tag, body),
                body=body,
                start_line=token.map[0] + 2,
            )
        )
    return tuple(blocks)
