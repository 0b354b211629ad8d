"""JSON Schema contracts: boolean schemas, offline $refs checked at intake, format annotates."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from schemas.request import OutputContract
from workers.errors import InvalidRequest
from workers.evaluate.floor.structure import check_floor

from .builders import decode, obj, output

# Schemas and instances from JSON-Schema-Test-Suite draft2020-12 (MIT), tunable items.
# refRemote/1/0 and refRemote/9/0: remote references (the suite serves them on localhost).
REMOTE_REFS = [
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": "http://localhost:1234/draft2020-12/subSchemas.json#/$defs/integer",
    },
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": "http://localhost:1234/draft2020-12/locationIndependentIdentifier.json"
        "#/$defs/refToInteger",
    },
]
# anchor/1/0: an absolute URI that the schema itself defines ($id), so it resolves offline.
LOCAL_ABSOLUTE = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$ref": "http://localhost:1234/draft2020-12/bar#foo",
    "$defs": {
        "A": {"$id": "http://localhost:1234/draft2020-12/bar", "$anchor": "foo", "type": "integer"}
    },
}


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """jsonschema's default retriever uses urlopen: any call to it fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def _floor(content: str, schema: object) -> list[str]:
    contract = OutputContract.model_validate_json(json.dumps({"json_schema": schema}))
    return [v.code for v in check_floor(output("json", content), contract).violations]


@pytest.mark.parametrize("schema", [*REMOTE_REFS, {"$ref": "#/$defs/missing"}])
def test_an_unresolvable_ref_is_refused_at_intake_naming_the_field(schema: object) -> None:
    with pytest.raises(InvalidRequest) as info:
        decode(obj(output={"kind": "json", "content": "1"}, contract={"json_schema": schema}))
    assert str(info.value).startswith("contract.json_schema:")
    assert "does not resolve" in str(info.value)


def test_refs_that_resolve_inside_the_schema_or_to_a_metaschema_are_accepted() -> None:
    assert _floor("1", LOCAL_ABSOLUTE) == []
    assert _floor('"a"', LOCAL_ABSOLUTE) == ["SchemaViolation"]
    meta = {"$ref": "https://json-schema.org/draft/2020-12/schema"}
    assert _floor('{"type": "object"}', meta) == []
    assert _floor('{"type": 12}', meta) == ["SchemaViolation"]
    defs = {"$defs": {"id": {"type": "string", "pattern": "^[a-z]+$"}}, "$ref": "#/$defs/id"}
    assert _floor('"abc"', defs) == []
    assert _floor('"ABC"', defs) == ["SchemaViolation"]


@pytest.mark.parametrize(
    ("schema", "content", "codes"),
    [
        (True, "null", []),  # boolean_schema/0/4
        (True, "{}", []),  # boolean_schema/0/6
        (False, "{}", ["SchemaViolation"]),
        (False, "1", ["SchemaViolation"]),
        ({"properties": {"a": False}}, '{"b": 1}', []),
        ({"properties": {"a": False}}, '{"a": 1}', ["SchemaViolation"]),
    ],
)
def test_boolean_schemas_are_contracts(schema: object, content: str, codes: list[str]) -> None:
    assert _floor(content, schema) == codes


def test_format_is_an_annotation_as_2020_12_defines_it() -> None:
    # format/0/6: "invalid email string is only an annotation by default"
    assert _floor('"2962"', {"format": "email"}) == []
    assert _floor('"2962"', {"type": "string", "pattern": "^[^@]+@[^@]+$"}) == ["SchemaViolation"]


def test_a_contract_that_slipped_past_intake_is_a_violation_not_a_crash() -> None:
    contract = OutputContract.model_construct(json_schema=REMOTE_REFS[0])
    violations = check_floor(output("json", "1"), contract).violations
    assert [(v.code, v.field) for v in violations] == [("ContractUnusable", "contract.json_schema")]


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
        {"$dynamicAnchor": "meta", "$dynamicRef": "#meta"},
    ],
)
def test_a_reference_loop_that_reads_nothing_is_refused_at_intake(schema: object) -> None:
    with pytest.raises(InvalidRequest) as info:
        decode(obj(output={"kind": "json", "content": "1"}, contract={"json_schema": schema}))
    assert str(info.value).startswith("contract.json_schema:")
    assert "loop" in str(info.value)


def test_a_recursive_schema_that_descends_is_accepted() -> None:
    tree = {
        "$defs": {"node": {"type": "object", "properties": {"kids": {"items": {"$ref": "#"}}}}},
        "$ref": "#/$defs/node",
    }
    assert _floor('{"kids": [{"kids": []}, {}]}', tree) == []
    assert _floor('{"kids": [1]}', tree) == ["SchemaViolation"]
