"""The Floor for code outputs beyond Python, JSON and SQL, and for code that is the deliverable.

An output of kind ``yaml``, ``toml``, ``javascript``, ``typescript``, ``shell``, ``html``,
``xml`` or ``dockerfile`` must parse as that language, whole and as written: a node asked
for a file returns the file (a TypeScript module may hold JSX, as a ``.tsx`` file does).
A markdown or text output whose contract says its code is the deliverable
(``contract.code_deliverable``) must hold at least one fenced block in a language the
engine parses, and every such block must parse; a block is read as an editor reads it
(``workers.evaluate.code.blocks``).
"""

from __future__ import annotations

import tomllib
from typing import Any

from schemas.code import BlockStatus, CodeLanguage, Position
from schemas.request import NodeOutput, OutputKind
from schemas.stages import Violation, ViolationCode
from workers.evaluate.code.blocks import read_blocks
from workers.evaluate.code.syntax import parses_as_tsx, syntax_error
from workers.evaluate.parsed import ParseFailure, json_document

#: Each new kind's language and the violation its parse error is.
CODE_KINDS: dict[OutputKind, tuple[CodeLanguage, ViolationCode]] = {
    OutputKind.YAML: (CodeLanguage.YAML, ViolationCode.YAML_ERROR),
    OutputKind.TOML: (CodeLanguage.TOML, ViolationCode.TOML_DECODE_ERROR),
    OutputKind.JAVASCRIPT: (CodeLanguage.JAVASCRIPT, ViolationCode.JAVASCRIPT_SYNTAX_ERROR),
    OutputKind.TYPESCRIPT: (CodeLanguage.TYPESCRIPT, ViolationCode.TYPESCRIPT_SYNTAX_ERROR),
    OutputKind.SHELL: (CodeLanguage.SHELL, ViolationCode.SHELL_SYNTAX_ERROR),
    OutputKind.HTML: (CodeLanguage.HTML, ViolationCode.HTML_SYNTAX_ERROR),
    OutputKind.XML: (CodeLanguage.XML, ViolationCode.XML_SYNTAX_ERROR),
    OutputKind.DOCKERFILE: (CodeLanguage.DOCKERFILE, ViolationCode.DOCKERFILE_SYNTAX_ERROR),
}
#: The kinds whose content may hold fenced blocks.
PROSE_KINDS = frozenset({OutputKind.MARKDOWN, OutputKind.TEXT})
#: Most block violations one output reports.
MAX_BLOCK_VIOLATIONS = 20


def parse_violation(code: ViolationCode, failure: ParseFailure) -> Violation:
    """A parse failure as a Floor violation, with its position when the parser gave one."""
    if failure.line is None:
        return Violation(code=code, message=failure.message)
    column = max(1, failure.column or 1)
    return Violation(
        code=code,
        message=f"{failure.message} (line {failure.line}, column {column})",
        field=f"line {failure.line}",
        position=Position(line=failure.line, column=column),
    )


def code_kind_violations(kind: OutputKind, content: str) -> list[Violation]:
    """The parse error of a yaml, toml, javascript... output, whole and as written."""
    language, code = CODE_KINDS[kind]
    failure = syntax_error(language, content)
    if failure is not None and language is CodeLanguage.TYPESCRIPT and parses_as_tsx(content):
        return []  # a module with JSX: a .tsx file, TypeScript as its compiler reads it
    return [] if failure is None else [parse_violation(code, failure)]


def deliverable_block_violations(content: str) -> list[Violation]:
    """Every fenced block that does not parse; or the absence of any block to parse."""
    readings = read_blocks(content)
    if not any(r.block.language is not None for r in readings):
        return [
            Violation(
                code=ViolationCode.NO_CODE_BLOCK,
                message="the contract says the code is the deliverable, "
                "and the output has no fenced block in a language the engine parses",
            )
        ]
    return [
        Violation(
            code=ViolationCode.CODE_BLOCK_SYNTAX_ERROR,
            message=reading.describe()[:500],
            field=f"block {reading.block.index}",
            position=reading.position,
        )
        for reading in readings
        if reading.status is BlockStatus.SYNTAX_ERROR
    ][:MAX_BLOCK_VIOLATIONS]


def contract_documents(output: NodeOutput) -> list[Any] | ParseFailure | None:
    """The parsed documents a schema and required keys apply to; None for other kinds.

    A ``ParseFailure``: the documents parse but cannot be checked (an alias bomb).
    """
    if output.kind is OutputKind.JSON:
        return [json_document(output.content)]
    if output.kind is OutputKind.YAML:
        from workers.evaluate.code.yaml_docs import yaml_documents

        return yaml_documents(output.content)
    if output.kind is OutputKind.TOML:
        from workers.evaluate.code.yaml_docs import as_json

        try:
            return [as_json(tomllib.loads(output.content))]
        except (tomllib.TOMLDecodeError, RecursionError):
            return []
    return None
