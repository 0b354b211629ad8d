"""The wire contract: generated JSON Schemas, round trips, and strict refusal naming the field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from schemas.export import JSON_DIR, generate, stale
from schemas.judging import ModelPrice
from schemas.quality import QualityVector
from schemas.request import ReviewRequest
from schemas.result import ReviewError, ReviewResult
from workers.errors import InvalidRequest
from workers.intake import decode_request
from workers.judges.builtin import BuiltinJudge
from workers.review import review

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "workers" / "samples").glob("*.json"))
PRICE = ModelPrice(
    input_per_mtok=3.0, output_per_mtok=15.0, cache_read_per_mtok=0.3, cache_write_per_mtok=3.75
)


def _base() -> dict[str, Any]:
    return {
        "dag_id": "dag-1",
        "node_id": "node-1",
        "skill": {"id": "s", "success_rate": 0.9, "stage": "novice", "breaker": "closed"},
        "output": {"kind": "text", "content": "A short but real answer to the question asked."},
        "signals": {"self": 0.9, "peer": 0.7},
        "downstream": [{"node_id": "n2", "cost_usd": 0.1, "critical": True}],
        "flags": {"final_deliverable": False},
    }


def _decode(raw: str) -> ReviewRequest:
    return decode_request(raw.encode(), max_request_bytes=1_000_000, max_output_chars=100_000)


def _refusal(raw: str) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as info:
        _decode(raw)
    return info.value


def _schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((JSON_DIR / name).read_text(encoding="utf-8"))
    return loaded


# --- generated schema files -------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(generate()))
def test_checked_in_schema_file_equals_the_freshly_generated_one(name: str) -> None:
    assert (JSON_DIR / name).read_text(encoding="utf-8") == generate()[name]


def test_generation_is_deterministic_sorted_indented_and_newline_terminated() -> None:
    first, second = generate(), generate()
    assert first == second
    assert set(first) == {
        "review_request.schema.json",
        "review_result.schema.json",
        "review_error.schema.json",
        "human_verdict.schema.json",
        "human_decision.schema.json",
        "dag_shape.schema.json",
    }
    for text in first.values():
        assert text.endswith("}\n")
        assert (
            json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + ("\n")
            == text
        )


def test_request_schema_uses_the_wire_alias_self_for_the_self_signal() -> None:
    signals = _schema("review_request.schema.json")["$defs"]["Signals"]["properties"]
    assert "self" in signals
    assert "self_" not in signals


def test_result_schema_requires_the_envelope_and_forbids_extra_fields() -> None:
    schema = _schema("review_result.schema.json")
    assert "envelope" in schema["required"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["envelope"]["$ref"] == "#/$defs/Envelope"
    assert "anyOf" not in schema["properties"]["envelope"]


def test_export_check_exits_0_when_current_and_1_when_a_file_is_stale(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "schemas.export"]
    ok = subprocess.run([*cmd, "--check"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    written = subprocess.run(
        [*cmd, "--dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert written.returncode == 0
    assert stale(tmp_path) == []
    (tmp_path / "review_result.schema.json").write_text("{}\n", encoding="utf-8")
    bad = subprocess.run(
        [*cmd, "--check", "--dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1
    assert "review_result.schema.json" in bad.stderr


# --- round trips --------------------------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_sample_request_round_trips_and_validates_against_the_exported_schema(
    sample: Path,
) -> None:
    raw = sample.read_text(encoding="utf-8")
    request = _decode(raw)
    again = ReviewRequest.model_validate_json(request.model_dump_json(by_alias=True))
    assert again == request
    Draft202012Validator(_schema("review_request.schema.json")).validate(json.loads(raw))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_review_result_round_trips_and_validates_against_the_exported_schema(
    sample: Path,
) -> None:
    result = review(_decode(sample.read_text(encoding="utf-8")), BuiltinJudge(), stage2_price=PRICE)
    wire = result.model_dump_json(by_alias=True)
    assert ReviewResult.model_validate_json(wire) == result
    Draft202012Validator(_schema("review_result.schema.json")).validate(json.loads(wire))


def test_self_signal_round_trips_under_its_wire_name() -> None:
    request = _decode(json.dumps(_base()))
    assert request.signals is not None and request.signals.self_ == 0.9
    dumped = json.loads(request.model_dump_json(by_alias=True))
    assert dumped["signals"]["self"] == 0.9


def test_review_error_round_trips_and_validates() -> None:
    error = ReviewError.model_validate_json(
        json.dumps(
            {
                "dag_id": "d",
                "node_id": None,
                "attempt": None,
                "code": "invalid_request",
                "field": "skill.success_rate",
                "message": "Input should be a valid number",
            }
        )
    )
    wire = error.model_dump_json()
    assert ReviewError.model_validate_json(wire) == error
    Draft202012Validator(_schema("review_error.schema.json")).validate(json.loads(wire))


# --- refusals name the field -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ((), "colour"),
        (("skill",), "skill.colour"),
        (("output",), "output.colour"),
        (("signals",), "signals.colour"),
        (("flags",), "flags.colour"),
    ],
)
def test_unknown_field_is_rejected_naming_the_field(path: tuple[str, ...], field: str) -> None:
    value = _base()
    target = value
    for key in path:
        target = target[key]
    target["colour"] = "blue"
    error = _refusal(json.dumps(value))
    assert error.field == field
    assert error.reason == "unknown field"


def test_unknown_field_in_a_downstream_entry_names_its_index() -> None:
    value = _base()
    value["downstream"][0]["weight"] = 2
    assert _refusal(json.dumps(value)).field == "downstream.0.weight"


@pytest.mark.parametrize(
    ("path", "bad", "field"),
    [
        (("skill", "success_rate"), "0.9", "skill.success_rate"),
        (("skill", "success_rate"), True, "skill.success_rate"),
        (("skill", "success_rate"), 1.5, "skill.success_rate"),
        (("skill", "success_rate"), -0.1, "skill.success_rate"),
        (("skill", "stage"), "master", "skill.stage"),
        (("skill", "breaker"), "broken", "skill.breaker"),
        (("output", "kind"), "yml", "output.kind"),
        (("output", "content"), 42, "output.content"),
        (("node_cost_usd",), True, "node_cost_usd"),
        (("node_cost_usd",), "0.02", "node_cost_usd"),
        (("node_cost_usd",), -1.0, "node_cost_usd"),
        (("cascade_probability",), 1.2, "cascade_probability"),
        (("attempt",), 0, "attempt"),
        (("attempt",), "1", "attempt"),
        (("attempt",), 1.5, "attempt"),
        (("flags", "irreversible"), 1, "flags.irreversible"),
        (("flags", "irreversible"), "true", "flags.irreversible"),
        (("signals", "self"), "0.9", "signals.self"),
        (("signals", "peer"), 2.0, "signals.peer"),
        (("downstream",), {"node_id": "x"}, "downstream"),
        (("dag_id",), "has space", "dag_id"),
        (("history",), [0.5, "0.6"], "history.1"),
    ],
)
def test_ill_typed_value_is_rejected_naming_the_field(
    path: tuple[str, ...], bad: object, field: str
) -> None:
    value = _base()
    target = value
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = bad
    assert _refusal(json.dumps(value)).field == field


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_number_is_rejected_naming_the_field(literal: str) -> None:
    raw = json.dumps(_base()).replace('"success_rate": 0.9', f'"success_rate": {literal}')
    assert literal in raw
    assert _refusal(raw).field == "skill.success_rate"


def test_missing_required_field_is_named() -> None:
    value = _base()
    del value["skill"]["success_rate"]
    error = _refusal(json.dumps(value))
    assert (error.field, error.reason) == ("skill.success_rate", "required field is missing")


def test_invalid_json_schema_in_contract_is_rejected_naming_it() -> None:
    value = _base()
    value["contract"] = {"json_schema": {"type": "no-such-type"}}
    assert _refusal(json.dumps(value)).field == "contract.json_schema"


def test_contract_with_min_length_above_max_length_is_rejected() -> None:
    value = _base()
    value["contract"] = {"min_length": 10, "max_length": 5}
    assert _refusal(json.dumps(value)).field == "contract"


def test_result_with_unknown_escalation_reason_is_rejected() -> None:
    result = review(
        _decode(SAMPLES[0].read_text(encoding="utf-8")), BuiltinJudge(), stage2_price=PRICE
    )
    wire = json.loads(result.model_dump_json())
    wire["escalation"]["reason"] = "vibes"
    with pytest.raises(ValueError, match=r"escalation\.reason"):
        ReviewResult.model_validate_json(json.dumps(wire))


def test_result_without_envelope_is_rejected() -> None:
    result = review(
        _decode(SAMPLES[0].read_text(encoding="utf-8")), BuiltinJudge(), stage2_price=PRICE
    )
    wire = json.loads(result.model_dump_json())
    wire["envelope"] = None
    with pytest.raises(ValueError, match="envelope"):
        ReviewResult.model_validate_json(json.dumps(wire))


# --- no scalar collapse ------------------------------------------------------------------


def _vector() -> QualityVector:
    result = review(
        _decode(SAMPLES[0].read_text(encoding="utf-8")), BuiltinJudge(), stage2_price=PRICE
    )
    return result.quality


def test_quality_vector_cannot_be_converted_to_a_float() -> None:
    vector = _vector()
    assert not hasattr(QualityVector, "__float__")
    with pytest.raises(TypeError):
        float(vector)  # type: ignore[arg-type]


def test_quality_vector_has_no_score_method_or_other_scalar_conversion() -> None:
    for name in ("score", "overall", "mean", "__int__", "__index__", "__round__"):
        assert not hasattr(QualityVector, name), name
    with pytest.raises(TypeError):
        int(_vector())  # type: ignore[call-overload]


def test_quality_vector_serialises_one_named_field_per_dimension() -> None:
    wire = json.loads(_vector().model_dump_json())
    assert set(wire) == {
        "structure",
        "substance",
        "consistency",
        "grounding",
        "correctness",
        "completeness",
        "clarity",
        "relevance",
    }
    assert all(set(v) == {"status", "value", "justification", "definite"} for v in wire.values())
    # Null unless suspect findings lowered the value shown below what decisions gate on.
    assert all(v["definite"] is None for v in wire.values())
