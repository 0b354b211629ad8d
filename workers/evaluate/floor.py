"""The Floor: does the output parse, and does it meet its declared contract?

Every check is deterministic and cheap, so it runs before any model is asked.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from typing import Any

import sqlglot
import sqlglot.errors
from jsonschema import Draft202012Validator

from schemas.request import NodeOutput, OutputContract, OutputKind
from schemas.result import FloorResult, Violation

_UNCLOSED_DEF = re.compile(r"^\s*(?:async\s+)?def\s+\w+\s*\((?![^\n]*\)\s*(?:->[^\n]*)?:)", re.M)


def check_floor(output: NodeOutput, contract: OutputContract | None) -> FloorResult:
    """Run every Floor check and collect all violations, not just the first."""
    violations: list[Violation] = []
    if not output.content.strip():
        violations.append(Violation(code="EmptyOutput", message="the output is empty"))
    else:
        violations.extend(_PARSERS[output.kind](output.content))
    if contract is not None:
        violations.extend(_length_violations(output.content, contract))
        if not any(v.code in _PARSE_CODES for v in violations):
            violations.extend(_contract_violations(output, contract))
    return FloorResult(passed=not violations, violations=tuple(violations))


_PARSE_CODES = {"EmptyOutput", "SyntaxError", "JSONDecodeError", "SQLParseError"}


def _python(content: str) -> list[Violation]:
    try:
        ast.parse(content)
    except SyntaxError as exc:
        found = [
            Violation(
                code="SyntaxError",
                message=f"{exc.msg} (line {exc.lineno}, column {exc.offset})",
                field=f"line {exc.lineno}",
            )
        ]
        if _UNCLOSED_DEF.search(content):
            found.append(
                Violation(
                    code="IncompleteFunction",
                    message="a function definition's signature or body is not complete",
                )
            )
        return found
    return []


def _json(content: str) -> list[Violation]:
    try:
        json.loads(content)
    except json.JSONDecodeError as exc:
        return [
            Violation(
                code="JSONDecodeError",
                message=f"{exc.msg} (line {exc.lineno}, column {exc.colno})",
                field=f"line {exc.lineno}",
            )
        ]
    except RecursionError:
        return [Violation(code="JSONDecodeError", message="nesting too deep to parse")]
    return []


def _sql(content: str) -> list[Violation]:
    try:
        statements = sqlglot.parse(content, error_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.SqlglotError as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return [Violation(code="SQLParseError", message=first_line[:300])]
    except RecursionError:
        return [Violation(code="SQLParseError", message="nesting too deep to parse")]
    if not any(s is not None for s in statements):
        return [Violation(code="SQLParseError", message="no SQL statement found")]
    return []


def _no_parser(content: str) -> list[Violation]:
    return []


_PARSERS: dict[OutputKind, Callable[[str], list[Violation]]] = {
    OutputKind.PYTHON: _python,
    OutputKind.JSON: _json,
    OutputKind.SQL: _sql,
    OutputKind.TEXT: _no_parser,
    OutputKind.MARKDOWN: _no_parser,
}


def _length_violations(content: str, contract: OutputContract) -> list[Violation]:
    size = len(content)
    if contract.min_length is not None and size < contract.min_length:
        return [
            Violation(
                code="TooShort",
                message=f"{size} characters, fewer than the contract's {contract.min_length}",
            )
        ]
    if contract.max_length is not None and size > contract.max_length:
        return [
            Violation(
                code="TooLong",
                message=f"{size} characters, more than the contract's {contract.max_length}",
            )
        ]
    return []


def _contract_violations(output: NodeOutput, contract: OutputContract) -> list[Violation]:
    found: list[Violation] = []
    if output.kind is OutputKind.JSON:
        document = json.loads(output.content)
        if contract.json_schema is not None:
            found.extend(_schema_violations(document, contract.json_schema))
        found.extend(
            Violation(code="MissingField", message=f"required field {name!r} is absent", field=name)
            for name in contract.required_fields
            if not _has_path(document, name)
        )
    else:
        present = _PRESENCE[output.kind]
        found.extend(
            Violation(code="MissingField", message=f"required {name!r} is absent", field=name)
            for name in contract.required_fields
            if not present(output.content, name)
        )
    return found


def _schema_violations(document: Any, schema: dict[str, Any]) -> list[Violation]:
    validator = Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    return [
        Violation(
            code="SchemaViolation",
            message=error.message[:300],
            field=".".join(str(p) for p in error.absolute_path) or "$",
        )
        for error in errors[:20]
    ]


def _has_path(document: Any, dotted: str) -> bool:
    node = document
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _heading_present(content: str, name: str) -> bool:
    wanted = name.casefold()
    return any(
        line.lstrip().startswith("#") and wanted in line.casefold() for line in content.splitlines()
    )


def _name_defined(content: str, name: str) -> bool:
    tree = ast.parse(content)
    return any(
        (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name == name
        )
        or (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name)
        for node in ast.walk(tree)
    )


def _mentioned(content: str, name: str) -> bool:
    return name.casefold() in content.casefold()


_PRESENCE: dict[OutputKind, Callable[[str, str], bool]] = {
    OutputKind.MARKDOWN: _heading_present,
    OutputKind.PYTHON: _name_defined,
    OutputKind.SQL: _mentioned,
    OutputKind.TEXT: _mentioned,
}
