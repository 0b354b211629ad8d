"""Typed errors for any input: whatever a caller hands the intake, the answer is a request
or an ``InvalidRequest`` naming what it can, from the client, the CLI and the workers alike."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from schemas.request import ReviewRequest
from workers.client import ReviewClient
from workers.errors import InvalidRequest
from workers.intake import (
    MAX_INT_BITS,
    MAX_NESTING,
    OversizedRequest,
    check_json_value,
    decode_request,
    load_json,
    request_from_obj,
)
from workers.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
GOOD: dict[str, Any] = json.loads((ROOT / "workers" / "samples" / "good_python.json").read_text())
LIMITS = {"max_request_bytes": 200_000, "max_output_chars": 50_000}


def _nested(depth: int, leaf: Any = "x") -> Any:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


def _refusal(obj: Any) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        request_from_obj(obj, **LIMITS)
    return caught.value


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"task": _nested(3000)}, "task.0.0.0.0.0", "nested more than"),
        ({"contract": {"json_schema": {"a": _nested(3000)}}}, "contract.json_schema.a", "nested"),
        ({"attempt": 10**5000}, "attempt", "too large"),
        ({"node_cost_usd": math.nan}, "node_cost_usd", "not a finite number"),
        ({"node_cost_usd": -math.inf}, "node_cost_usd", "not a finite number"),
        ({"node_id": "\ud800"}, "node_id", "lone surrogate"),
        ({"output": {"kind": "text", "content": "ok \udfff"}}, "output.content", "surrogate"),
        ({"history": {0.5}}, "history", "set"),
        ({"node_id": b"bytes"}, "node_id", "bytes"),
        ({"flags": {("a",): True}}, "flags", "not a string"),
    ],
)
def test_values_json_cannot_take_name_their_field(
    change: dict[str, Any], field: str, words: str
) -> None:
    refusal = _refusal({**GOOD, **change})
    assert refusal.field.startswith(field), refusal.field
    assert words in refusal.reason


def test_a_cycle_is_refused_not_a_recursion_error() -> None:
    body = dict(GOOD)
    body["self"] = body
    assert "nested" in _refusal(body).reason


def test_raw_text_names_the_field_pydantic_could_not_parse() -> None:
    text = json.dumps(GOOD)[:-1] + ', "task": "\\ud800"}'
    with pytest.raises(InvalidRequest) as caught:
        decode_request(text, **LIMITS)
    assert caught.value.field == "task"
    deep = json.dumps(GOOD)[:-1] + ', "skill": ' + "[" * 3000 + "]" * 3000 + "}"
    with pytest.raises(InvalidRequest) as caught:
        decode_request(deep, **LIMITS)
    assert caught.value.field == "skill" and "nesting too deep" in caught.value.reason


def test_the_worker_and_the_client_agree_on_nesting() -> None:
    schema: Any = {"type": "object"}
    for _ in range(MAX_NESTING // 2):
        schema = {"type": "object", "properties": {"a": schema}}
    body = {**GOOD, "contract": {"json_schema": schema}}
    with pytest.raises(InvalidRequest) as client_side:
        request_from_obj(body, **LIMITS)
    with pytest.raises(InvalidRequest) as worker_side:
        decode_request(json.dumps(body), **LIMITS)
    assert client_side.value.field == worker_side.value.field


def test_the_client_refuses_deep_nesting_before_touching_the_broker() -> None:
    # No broker at this address: a refusal must come from validation, not a connection.
    client = ReviewClient(Settings(redis_url="redis://127.0.0.1:1/0"))
    try:
        with pytest.raises(InvalidRequest) as caught:
            client.submit({**GOOD, "task": _nested(3000)})
    finally:
        client.close()
    assert caught.value.field.startswith("task")


def test_the_cli_says_so_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 3000 + "]" * 3000)
    done = subprocess.run(
        [sys.executable, "-m", "workers.local.cli", "submit", str(path)],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "WINDAGS_REDIS_URL": "redis://127.0.0.1:1/0"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "nesting too deep" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


# --- any input at all ---------------------------------------------------------------------

_odd_text = st.text(
    alphabet=st.characters(blacklist_categories=()),  # surrogates included
    max_size=12,
)
_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**1000, max_value=2**1100),
    st.floats(),
    _odd_text,
    st.binary(max_size=4),
    st.sampled_from([set(), frozenset({1}), object(), 1j, ..., type]),
)
_value = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner),
        st.dictionaries(st.one_of(_odd_text, st.integers(), st.none()), inner, max_size=3),
        st.integers(MAX_NESTING - 2, 3 * MAX_NESTING).map(_nested),
    ),
    max_leaves=8,
)
_FIELDS = ["dag_id", "node_id", "attempt", "skill", "output", "contract", "task", "history"]


@st.composite
def _requests(draw: st.DrawFn) -> Any:
    if draw(st.booleans()):
        return draw(_value)
    body = json.loads(json.dumps(GOOD))
    for _ in range(draw(st.integers(1, 3))):
        body[draw(st.sampled_from(_FIELDS))] = draw(_value)
    return body


_ANY = settings(
    max_examples=700, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


@_ANY
@given(_requests())
def test_request_from_obj_only_ever_refuses_with_invalid_request(obj: Any) -> None:
    try:
        request = request_from_obj(obj, **LIMITS)
    except OversizedRequest as refusal:
        assert refusal.reason
    except InvalidRequest as refusal:
        assert refusal.reason and (refusal.field or "nesting" in refusal.reason)
    else:
        assert isinstance(request, ReviewRequest)


@_ANY
@given(
    _requests().map(lambda v: json.dumps(v, default=repr, allow_nan=True)) | st.text() | st.binary()
)
def test_decode_request_and_load_json_only_ever_refuse_with_invalid_request(
    raw: str | bytes,
) -> None:
    for call in (
        lambda: decode_request(raw, **LIMITS),
        lambda: load_json(raw, max_bytes=LIMITS["max_request_bytes"]),
    ):
        try:
            call()
        except InvalidRequest as refusal:
            assert refusal.reason


def _writable(value: Any, depth: int = 0) -> bool:
    """Whether JSON writes ``value`` as itself, within the intake's limits: the oracle.

    Written apart from ``check_json_value`` (recursive, by type): JSON's types only, text
    that is valid Unicode (keys too), finite numbers, integers of at most MAX_INT_BITS, at
    most MAX_NESTING levels.
    """
    if depth > MAX_NESTING:
        return False
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int):
        return value.bit_length() <= MAX_INT_BITS
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        return all(not 0xD800 <= ord(char) <= 0xDFFF for char in value)
    if isinstance(value, list | tuple):
        return all(_writable(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(
            isinstance(key, str) and _writable(key) and _writable(item, depth + 1)
            for key, item in value.items()
        )
    return False


def _as_json(value: Any) -> Any:
    """``value`` as JSON reads it back: tuples are lists."""
    if isinstance(value, list | tuple):
        return [_as_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_json(item) for key, item in value.items()}
    return value


@_ANY
@given(_value)
@example({"\udfff": 1})  # a key that is not valid Unicode: JSON would write it escaped
@example({"ok": [None, 1.5, 2**MAX_INT_BITS - 1]})
def test_check_json_value_accepts_exactly_what_json_can_write(value: Any) -> None:
    try:
        check_json_value(value, max_values=100_000)
    except InvalidRequest:
        accepted = False
    else:
        accepted = True
    assert accepted == _writable(value), value
    if accepted:  # the standard library writes it, and reads back what it was given
        assert json.loads(json.dumps(value, allow_nan=False)) == _as_json(value)


def test_the_oracle_tells_what_json_cannot_write() -> None:
    assert _writable({"a": [1, 2.5, None, True, "é"]}) and _writable(_nested(MAX_NESTING))
    bad = [
        math.nan,
        2**2000,
        "\ud800",
        {"\udfff": 1},
        {1: "x"},
        b"x",
        {1},
        _nested(MAX_NESTING + 1),
    ]
    assert not any(_writable(value) for value in bad)
