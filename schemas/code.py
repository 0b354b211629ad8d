"""Code in an output: the languages the engine parses, where a finding is, and each fenced block."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from schemas.base import WireModel

#: Most fenced blocks a result lists; an output with more lists the first ones.
MAX_LISTED_BLOCKS = 50


class CodeLanguage(StrEnum):
    """A language the engine has a parser for: a fenced block's tag or an output's kind."""

    PYTHON = "python"
    JSON = "json"
    YAML = "yaml"
    TOML = "toml"
    SQL = "sql"
    JAVASCRIPT = "javascript"
    TYPESCRIPT = "typescript"
    SHELL = "shell"
    HTML = "html"
    XML = "xml"
    DOCKERFILE = "dockerfile"


class Position(WireModel):
    """Where in the output a parser stopped: a line and column, inside a fenced block or not."""

    line: Annotated[int, Field(ge=1)]
    """1-based line, counted inside the block when ``block`` is set, else in the output."""
    column: Annotated[int, Field(ge=1)]
    """1-based column (characters) on that line."""
    block: Annotated[int, Field(ge=1)] | None = None
    """1-based index of the fenced block among the output's fenced blocks; null for a whole
    output of its own kind."""
    output_line: Annotated[int, Field(ge=1)] | None = None
    """The same line counted in the whole output (a block's line plus where it starts)."""


class BlockStatus(StrEnum):
    """What became of one fenced block."""

    PARSED = "parsed"
    """Its language's parser accepted it (as written, or as the fragment an editor reads)."""
    SYNTAX_ERROR = "syntax_error"
    """Its language's parser rejected it: a finding names the line, column and message."""
    UNCHECKED = "unchecked"
    """Not parsed, and never failed: an unknown language, a console session, a diff, a
    template, an untagged block of no certain language, or elided code."""


class CodeBlock(WireModel):
    """One fenced block of a markdown or text output, as the engine read it."""

    block: Annotated[int, Field(ge=1)]
    """1-based index among the output's fenced blocks."""
    tag: Annotated[str, Field(max_length=40)]
    """The info string's first word as written, lower-cased (empty when untagged)."""
    language: CodeLanguage | None
    """The parser it was read with; null when none applies."""
    line: Annotated[int, Field(ge=1)]
    """1-based line of the output on which the block's code starts."""
    status: BlockStatus
    """Parsed, rejected or left unchecked."""
    note: Annotated[str, Field(max_length=300)] = ""
    """Why it was left unchecked, or how it was read (``a fragment, read as an expression``)."""


__all__ = ["MAX_LISTED_BLOCKS", "BlockStatus", "CodeBlock", "CodeLanguage", "Position"]
