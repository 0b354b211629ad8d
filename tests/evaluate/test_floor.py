"""The Floor: parse per kind, contract checks, every violation collected."""

from __future__ import annotations

import json
from typing import Any

import pytest

from schemas.request import OutputContract
from workers.evaluate.floor.structure import check_floor

from .builders import BROKEN_FLASK, GOOD_PYTHON, output


def _contract(**fields: Any) -> OutputContract:
    return OutputContract.model_validate_json(json.dumps(fields))


def _codes(kind: str, content: str, contract: OutputContract | None = None) -> list[str]:
    return [v.code for v in check_floor(output(kind, content), contract).violations]


@pytest.mark.parametrize(
    ("kind", "content", "codes"),
    [
        ("python", BROKEN_FLASK, ["SyntaxError", "IncompleteFunction"]),
        ("python", "x = (1,\n", ["SyntaxError"]),
        ("python", GOOD_PYTHON, []),
        ("python", "async def fetch(url:\n    pass\n", ["SyntaxError", "IncompleteFunction"]),
        ("json", '{"a": 1,', ["JSONDecodeError"]),
        ("json", "{'a': 1}", ["JSONDecodeError"]),
        ("json", '{"a": [1, 2, {"b": null}]}', []),
        ("sql", "SELEC id FRM t", ["SQLParseError"]),
        ("sql", "SELECT id FROM", ["SQLParseError"]),
        ("sql", "SELECT * FROM t WHERE", ["SQLParseError"]),
        ("sql", "SELECT id, total FROM orders WHERE total > 10 ORDER BY id LIMIT 5", []),
        ("text", "Plain prose has no parser, so any non-empty text parses.", []),
        ("markdown", "# Heading\n\nBody.", []),
        ("text", "", ["EmptyOutput"]),
        ("python", "   \n\t  ", ["EmptyOutput"]),
        ("json", "\n", ["EmptyOutput"]),
    ],
)
def test_floor_parses_each_kind_and_names_what_broke(
    kind: str, content: str, codes: list[str]
) -> None:
    result = check_floor(output(kind, content), None)
    assert [v.code for v in result.violations] == codes
    assert result.passed is (codes == [])


def test_python_syntax_error_says_where() -> None:
    violation = check_floor(output("python", BROKEN_FLASK), None).violations[0]
    assert violation.field is not None and violation.field.startswith("line ")
    assert "line" in violation.message


def test_json_schema_violations_name_the_path_of_each_offending_value() -> None:
    schema = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"price": {"type": "number"}}},
            },
        },
    }
    document = {"items": [{"price": 1.0}, {"price": "cheap"}]}
    result = check_floor(output("json", json.dumps(document)), _contract(json_schema=schema))
    fields = {v.field for v in result.violations if v.code == "SchemaViolation"}
    assert fields == {"$", "items.1.price"}
    assert not result.passed


def test_json_that_satisfies_its_schema_passes() -> None:
    schema = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
    assert _codes("json", '{"name": "x"}', _contract(json_schema=schema)) == []


@pytest.mark.parametrize(
    ("kind", "content", "required", "missing"),
    [
        ("json", '{"meta": {"title": "t"}, "body": "b"}', ["body", "meta.author"], ["meta.author"]),
        ("json", '{"meta": {"author": "a"}, "body": "b"}', ["body", "meta.author"], []),
        ("json", "[1, 2]", ["body"], ["body"]),
        ("markdown", "# Changes\n\nA.\n\n## Upgrade notes\n\nB.", ["Changes", "Upgrade notes"], []),
        ("markdown", "# Changes\n\nUpgrade notes are below.", ["Upgrade notes"], ["Upgrade notes"]),
        ("python", GOOD_PYTHON, ["slugify"], []),
        ("python", GOOD_PYTHON, ["slugify", "unslugify"], ["unslugify"]),
        ("python", "LIMIT = 3\n", ["LIMIT"], []),
        ("sql", "SELECT id FROM orders", ["orders"], []),
        ("sql", "SELECT id FROM orders", ["customers"], ["customers"]),
        ("text", "The summary mentions latency.", ["latency", "throughput"], ["throughput"]),
    ],
)
def test_required_fields_are_checked_per_kind(
    kind: str, content: str, required: list[str], missing: list[str]
) -> None:
    result = check_floor(output(kind, content), _contract(required_fields=required))
    assert [v.field for v in result.violations if v.code == "MissingField"] == missing


@pytest.mark.parametrize(
    ("content", "bounds", "codes"),
    [
        ("abc", {"min_length": 4}, ["TooShort"]),
        ("abcd", {"min_length": 4}, []),
        ("abcdef", {"max_length": 5}, ["TooLong"]),
        ("abcde", {"max_length": 5}, []),
        ("abcde", {"min_length": 5, "max_length": 5}, []),
    ],
)
def test_length_bounds_are_inclusive(
    content: str, bounds: dict[str, int], codes: list[str]
) -> None:
    assert _codes("text", content, _contract(**bounds)) == codes


def test_every_violation_is_collected_not_just_the_first() -> None:
    contract = _contract(min_length=100, required_fields=["Summary", "Risks"])
    codes = _codes("markdown", "# Summary\n\nShort.", contract)
    assert codes == ["TooShort", "MissingField"]


def test_contract_checks_are_skipped_when_the_output_does_not_parse() -> None:
    contract = _contract(required_fields=["body"], json_schema={"type": "object"})
    assert _codes("json", '{"body": ', contract) == ["JSONDecodeError"]


def test_empty_output_skips_contract_checks_but_not_length_bounds() -> None:
    contract = _contract(min_length=10, required_fields=["x"])
    assert _codes("text", "", contract) == ["EmptyOutput", "TooShort"]


def test_sql_that_crashes_the_parser_itself_is_a_floor_violation_not_an_exception() -> None:
    from schemas.request import NodeOutput, OutputKind
    from workers.evaluate.floor.structure import check_floor

    floor = check_floor(NodeOutput(kind=OutputKind.SQL, content="(" * 50 + "{=" + "[" * 50), None)
    assert not floor.passed
    assert [v.code for v in floor.violations] == ["SQLParseError"]
