"""The Floor: does the output parse, and does it meet its declared contract?

Every check is deterministic and cheap, so it runs before any model is asked.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from referencing.exceptions import Unresolvable

from schemas.contracts import contract_validator
from schemas.request import NodeOutput, OutputContract, OutputKind
from schemas.stages import FloorResult, Violation, ViolationCode
from workers.evaluate.floor.code import (
    CODE_KINDS,
    PROSE_KINDS,
    code_kind_violations,
    contract_documents,
    deliverable_block_violations,
    parse_violation,
)
from workers.evaluate.floor.sql import sql_violations
from workers.evaluate.parsed import (
    ParseFailure,
    json_document,
    python_compile_error,
    python_tree,
    sql_statements,
)

_UNCLOSED_DEF = re.compile(r"^\s*(?:async\s+)?def\s+\w+\s*\((?![^\n]*\)\s*(?:->[^\n]*)?:)", re.M)


def check_floor(output: NodeOutput, contract: OutputContract | None) -> FloorResult:
    """Run every Floor check and collect all violations, not just the first."""
    violations: list[Violation] = []
    if not output.content.strip():
        violations.append(Violation(code=ViolationCode.EMPTY_OUTPUT, message="the output is empty"))
    elif output.kind in CODE_KINDS:
        violations.extend(code_kind_violations(output.kind, output.content))
    else:
        violations.extend(_PARSERS[output.kind](output.content))
    if contract is not None and contract.code_deliverable and output.kind in PROSE_KINDS:
        violations.extend(deliverable_block_violations(output.content))
    if output.kind is OutputKind.SQL and not violations:
        statements = sql_statements(output.content)
        if not isinstance(statements, ParseFailure):
            violations.extend(
                sql_violations(statements, contract.catalog if contract is not None else None)
            )
    if contract is not None:
        violations.extend(_length_violations(output.content, contract))
        if not any(v.code in _PARSE_CODES for v in violations):
            violations.extend(_contract_violations(output, contract))
    return FloorResult(passed=not violations, violations=tuple(violations))


_PARSE_CODES = {
    ViolationCode.EMPTY_OUTPUT,
    ViolationCode.SYNTAX_ERROR,
    ViolationCode.JSON_DECODE_ERROR,
    ViolationCode.SQL_PARSE_ERROR,
    *(code for _, code in CODE_KINDS.values()),
}


def _python(content: str) -> list[Violation]:
    tree = python_tree(content)
    if not isinstance(tree, ParseFailure):
        refused = python_compile_error(content)
        return [] if refused is None else [parse_violation(ViolationCode.COMPILE_ERROR, refused)]
    found = [parse_violation(ViolationCode.SYNTAX_ERROR, tree)]
    if _UNCLOSED_DEF.search(content):
        found.append(
            Violation(
                code=ViolationCode.INCOMPLETE_FUNCTION,
                message="a function definition's signature or body is not complete",
            )
        )
    return found


def _json(content: str) -> list[Violation]:
    document = json_document(content)
    return (
        [parse_violation(ViolationCode.JSON_DECODE_ERROR, document)]
        if isinstance(document, ParseFailure)
        else []
    )


def _sql(content: str) -> list[Violation]:
    statements = sql_statements(content)
    return (
        [parse_violation(ViolationCode.SQL_PARSE_ERROR, statements)]
        if isinstance(statements, ParseFailure)
        else []
    )


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
                code=ViolationCode.TOO_SHORT,
                message=f"{size} characters, fewer than the contract's {contract.min_length}",
            )
        ]
    if contract.max_length is not None and size > contract.max_length:
        return [
            Violation(
                code=ViolationCode.TOO_LONG,
                message=f"{size} characters, more than the contract's {contract.max_length}",
            )
        ]
    return []


def _contract_violations(output: NodeOutput, contract: OutputContract) -> list[Violation]:
    found: list[Violation] = []
    documents = contract_documents(output)
    if isinstance(documents, ParseFailure):
        return [
            Violation(
                code=ViolationCode.CONTRACT_UNUSABLE,
                message=f"the output cannot be checked against its contract: {documents.message}",
            )
        ]
    if documents is not None:
        for number, document in enumerate(documents, 1):
            of = f"document {number}: " if len(documents) > 1 else ""
            if contract.json_schema is not None:
                found.extend(
                    v.model_copy(update={"message": of + v.message})
                    for v in _schema_violations(document, contract.json_schema)
                )
            found.extend(
                Violation(
                    code=ViolationCode.MISSING_FIELD,
                    message=f"{of}required field {name!r} is absent",
                    field=name,
                )
                for name in contract.required_fields
                if not _has_path(document, name)
            )
    else:
        present = _PRESENCE.get(output.kind, _mentioned)
        found.extend(
            Violation(
                code=ViolationCode.MISSING_FIELD, message=f"required {name!r} is absent", field=name
            )
            for name in contract.required_fields
            if not present(output.content, name)
        )
    return found


def _schema_violations(document: Any, schema: dict[str, Any] | bool) -> list[Violation]:
    """Every place the document breaks its schema; ``format`` is an annotation (2020-12)."""
    try:
        errors = sorted(
            contract_validator(schema).iter_errors(document),
            key=lambda e: list(e.absolute_path),
        )
    except (Unresolvable, re.error, RecursionError) as exc:
        # Intake refuses unresolvable references; this is the last line, not the first.
        return [
            Violation(
                code=ViolationCode.CONTRACT_UNUSABLE,
                message=f"the contract's JSON Schema could not be applied: {exc}"[:300],
                field="contract.json_schema",
            )
        ]
    return [
        Violation(
            code=ViolationCode.SCHEMA_VIOLATION,
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
    tree = python_tree(content)
    if isinstance(tree, ParseFailure):
        return False
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
