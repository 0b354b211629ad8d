"""Bad input: the decoder only refuses with ``InvalidRequest``; the fleet never crashes on it."""

from __future__ import annotations

import copy
import json
import math
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from celery import Celery
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.request import ReviewRequest
from schemas.result import ErrorCode, ReviewError
from tests.faults.support import FleetUnderTest, count_stream, fresh_dag, record, sample
from tests.infrastructure import wait_until
from workers.errors import InvalidRequest
from workers.fleet.queues import Queue, TaskName
from workers.intake import OversizedRequest, decode_request
from workers.results.stream import read_all

MAX_BYTES = 200_000
MAX_CHARS = 50_000

# --- strategies -----------------------------------------------------------------------

_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["novice", "open", "yaml", "EXPERT", "", "1", "0.5", "-1", "true"]),
)
_json_value = st.recursive(
    _json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)

#: Dotted paths into a valid request, each a place to break.
_PATHS = [
    "dag_id",
    "node_id",
    "attempt",
    "max_iterations",
    "skill",
    "skill.id",
    "skill.success_rate",
    "skill.stage",
    "skill.breaker",
    "output",
    "output.kind",
    "output.content",
    "contract",
    "contract.json_schema",
    "contract.min_length",
    "contract.max_length",
    "contract.required_fields",
    "node_cost_usd",
    "downstream",
    "cascade_probability",
    "stage2_cost_usd",
    "flags",
    "flags.final_deliverable",
    "signals",
    "signals.self",
    "signals.peer",
    "history",
    "node_elapsed_s",
    "node_timeout_s",
    "baseline",
    "task",
]

_SPECIAL = st.sampled_from(
    [
        math.nan,
        math.inf,
        -math.inf,
        -0.01,
        -1e300,
        1.0000001,
        7,
        -3,
        2**63,
        "x" * 70_000,
        "\ud800",
        "\x00",
        "a b",
        "dag:\r\nSET x 1",
        [],
        {},
        True,
        None,
        {"type": "object", "properties": {"a": {"type": "nope"}}},
        {"$ref": "#/nowhere"},
        {"pattern": "("},
        [{"node_id": "d", "cost_usd": -5}],
        [{"node_id": "d", "cost_usd": 1, "critical": "yes", "extra": 1}],
    ]
)


def _base() -> dict[str, Any]:
    body = sample("good_python", dag_id="fuzz-dag")
    body["contract"] = {"required_fields": ["slugify"], "min_length": 1, "max_length": 10_000}
    body["signals"] = {"self": 0.9, "peer": 0.8}
    return body


@st.composite
def mutated_requests(draw: st.DrawFn) -> dict[str, Any]:
    """A valid request with one to three fields replaced, deleted, or joined by a stranger."""
    body = _base()
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_PATHS)).split(".")
        parent: Any = body
        for part in path[:-1]:
            if not isinstance(parent, dict):
                break
            parent = parent.setdefault(part, {})
        if not isinstance(parent, dict):
            continue
        action = draw(st.sampled_from(["replace", "special", "delete", "unknown"]))
        if action == "replace":
            parent[path[-1]] = draw(_json_value)
        elif action == "special":
            # A copy: the specials are shared instances, and a later path may write into one.
            parent[path[-1]] = copy.deepcopy(draw(_SPECIAL))
        elif action == "delete":
            parent.pop(path[-1], None)
        else:
            parent[draw(st.text(min_size=1, max_size=10))] = draw(_json_leaf)
    return body


def _dumps(obj: Any) -> str:
    return json.dumps(obj, allow_nan=True, ensure_ascii=False)


def _nested(depth: int, opener: str, closer: str) -> str:
    return opener * depth + closer * depth


_raw_texts = st.one_of(
    mutated_requests().map(_dumps),
    _json_value.map(_dumps),
    st.text(max_size=200),
    st.integers(10, 50_000).map(lambda d: _nested(d, "[", "]")),
    st.integers(10, 5_000).map(lambda d: '{"dag_id": "d", "skill": ' + _nested(d, "[", "]") + "}"),
    st.integers(1, 3).map(lambda k: _dumps(_base() | {"task": "y" * (k * 100_000)})),
    mutated_requests().map(lambda b: _dumps(b)[: max(1, len(_dumps(b)) // 2)]),
)
_raw_bytes = st.one_of(
    st.binary(max_size=200),
    mutated_requests().map(lambda b: _dumps(b).encode("utf-8", "surrogatepass") + b"\xff\xfe"),
    mutated_requests().map(lambda b: b"\xc3" + _dumps(b).encode("utf-8", "surrogatepass")),
)


def _check(raw: str | bytes, stats: Counter[str]) -> None:
    try:
        request = decode_request(raw, max_request_bytes=MAX_BYTES, max_output_chars=MAX_CHARS)
    except OversizedRequest:
        stats["oversized"] += 1
    except InvalidRequest as exc:
        stats["invalid"] += 1
        assert exc.reason, "a refusal must say what was wrong"
        if not exc.field:
            # Only failures before schema validation may have no field.
            assert any(w in exc.reason for w in ("UTF-8", "nesting", "bytes")), exc.reason
        else:
            stats["invalid_with_field"] += 1
    else:
        stats["valid"] += 1
        assert isinstance(request, ReviewRequest)
        again = ReviewRequest.model_validate_json(request.model_dump_json(by_alias=True))
        assert again == request
        assert len(request.output.content) <= MAX_CHARS


_FUZZ = settings(
    max_examples=2500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)


@pytest.fixture(scope="module")
def fuzz_stats() -> Iterator[Counter[str]]:
    """What the module's fuzz tests covered, recorded once both have run."""
    stats: Counter[str] = Counter()
    yield stats
    total = sum(v for k, v in stats.items() if k != "invalid_with_field")
    record("fuzz_decode_request", {"cases": total, **dict(stats)})


@_FUZZ
@given(_raw_texts)
def _fuzz_texts(stats: Counter[str], raw: str) -> None:
    _check(raw, stats)


@settings(_FUZZ, max_examples=800)
@given(_raw_bytes)
def _fuzz_bytes(stats: Counter[str], raw: bytes) -> None:
    _check(raw, stats)


def test_decode_request_on_fuzzed_text_only_refuses_with_invalid_request(
    fuzz_stats: Counter[str],
) -> None:
    seen: Counter[str] = Counter()
    _fuzz_texts(seen)
    fuzz_stats.update(seen)
    # Both sides were reached: refusals were checked, and so were valid round trips.
    assert seen["invalid_with_field"] > 0 and seen["valid"] > 0, seen


def test_decode_request_on_fuzzed_bytes_only_refuses_with_invalid_request(
    fuzz_stats: Counter[str],
) -> None:
    seen: Counter[str] = Counter()
    _fuzz_bytes(seen)
    fuzz_stats.update(seen)
    # Every input here is broken on purpose (not UTF-8): none may pass.
    assert seen["invalid"] > 0 and seen["valid"] == 0, seen


# --- through the real queue ------------------------------------------------------------


def _bad_bodies(dag: str) -> list[tuple[Any, str | None, ErrorCode]]:
    """(task argument, the field the error must name or None, expected code)."""
    cases: list[tuple[Any, str | None, ErrorCode]] = []
    good = sample("good_python", dag_id=dag)
    breakers: list[tuple[str, Any]] = [
        ("skill.success_rate", 1.5),
        ("skill.success_rate", -0.2),
        ("skill.success_rate", "0.9"),
        ("skill.stage", "grandmaster"),
        ("skill.breaker", "ajar"),
        ("output.kind", "yml"),
        ("output.content", 42),
        ("node_cost_usd", -1.0),
        ("cascade_probability", 3),
        ("attempt", 0),
        ("attempt", "1"),
        ("max_iterations", 10_000),
        ("flags.final_deliverable", "yes"),
        ("signals.peer", 2.0),
        ("history", [0.5, 1.5]),
    ]
    for i in range(150):
        field, value = breakers[i % len(breakers)]
        body = json.loads(json.dumps(good))
        body["node_id"] = f"bad-{i:03d}"
        top, _, leaf = field.partition(".")
        if leaf:
            body.setdefault(top, {})[leaf] = value
        else:
            body[top] = value
        cases.append((json.dumps(body), field, ErrorCode.INVALID_REQUEST))
    for i in range(30):
        body = json.loads(json.dumps(good))
        body["node_id"] = f"unknown-{i:03d}"
        body[f"surprise_{i}"] = True
        cases.append((json.dumps(body), f"surprise_{i}", ErrorCode.INVALID_REQUEST))
    for i in range(20):
        body = json.loads(json.dumps(good))
        body["node_id"] = f"missing-{i:03d}"
        del body["skill" if i % 2 else "output"]
        cases.append(
            (json.dumps(body), "output" if i % 2 == 0 else "skill", ErrorCode.INVALID_REQUEST)
        )
    for i in range(20):
        body = json.loads(json.dumps(good))
        body["node_id"] = f"huge-{i:03d}"
        body["output"] = {"kind": "text", "content": "z" * (MAX_CHARS + 1 + i)}
        cases.append((json.dumps(body), "output.content", ErrorCode.OVERSIZED))
    # Unreadable: no DAG can be read, so the error goes to the unroutable stream.
    unreadable: list[Any] = [
        "{not json",
        "",
        "null",
        "[1, 2, 3]",
        '"just a string"',
        "\x00\x01\x02",
        "[" * 5000 + "]" * 5000,
        json.dumps({"dag_id": 7, "node_id": "x"}),
        json.dumps({"dag_id": "bad dag id with spaces" * 20}),
        12345,
        None,
        ["a", "list"],
        {"node": "a-dict-not-a-string"},
        3.5,
        True,
    ]
    for i in range(60):
        value = unreadable[i % len(unreadable)]
        if isinstance(value, str) and i >= len(unreadable):
            value = value + " " * i  # distinct bodies, distinct dedup keys
        cases.append((value, None, ErrorCode.INVALID_REQUEST))
    return cases


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(150)
def test_garbage_through_the_queue_becomes_error_entries_and_no_worker_dies(
    builtin: FleetUnderTest, app: Celery
) -> None:
    dag = fresh_dag("bad")
    cases = _bad_bodies(dag)
    routable = [c for c in cases if c[1] is not None]
    unroutable_key = builtin.settings.keys.unroutable
    unroutable_before = builtin.db.xlen(unroutable_key)
    started = time.monotonic()
    for arg, _, _ in cases:
        app.send_task(TaskName.STAGE1.value, args=[arg])
    # A valid review behind the garbage proves the fleet still works afterwards.
    good_node = "still-works"
    app.send_task(
        TaskName.STAGE1.value,
        args=[json.dumps(sample("good_python", dag_id=dag, node_id=good_node))],
    )
    # The worker reads a non-string argument as its JSON text (None is "null").
    expected_unroutable = len(
        {c[0] if isinstance(c[0], str) else json.dumps(c[0]) for c in cases if c[1] is None}
    )

    expected_nodes = {json.loads(c[0])["node_id"] for c in routable} | {good_node}

    def done() -> bool:
        """Every routable body's entry and the good review's, by node (not by counting)."""
        counted = count_stream(builtin.db, builtin.settings, dag)
        return expected_nodes <= {key.split(":")[1] for key in counted.per_key} and (
            builtin.db.xlen(unroutable_key) - unroutable_before >= expected_unroutable
        )

    finished = wait_until(done, timeout_s=90)
    took_s = time.monotonic() - started
    counted = count_stream(builtin.db, builtin.settings, dag)
    alive = {q.value: builtin.fleet.workers[q].poll() is None for q in Queue}
    builtin.fleet.wait_ready(timeout_s=20)  # every worker still answers ping

    by_node = {e.node_id: e for e in counted.errors.values()}
    per_node = Counter(k.split(":")[1] for k in counted.per_key.elements())
    wrong_field: list[str] = []
    wrong_code: list[str] = []
    missing: list[str] = []
    for arg, field, code in routable:
        node = json.loads(arg)["node_id"]
        error = by_node.get(node)
        if error is None:
            missing.append(node)
            continue
        # A list field names the offending item: history.1 for history.
        if field is None or not (error.field or "").startswith(field):
            wrong_field.append(f"{node}: {error.field!r} != {field!r}")
        if error.code is not code:
            wrong_code.append(f"{node}: {error.code}")
    duplicated = {n: c for n, c in per_node.items() if c > 1}
    unroutable_entries = [
        e.payload for e in read_all(builtin.db, unroutable_key)[unroutable_before:]
    ]
    assert all(isinstance(p, ReviewError) for p in unroutable_entries)
    record(
        "bad_input_queue",
        {
            "bodies_sent": len(cases),
            "routable": len(routable),
            "routable_error_entries": len(counted.errors),
            "oversized_entries": sum(
                1 for e in counted.errors.values() if e.code is ErrorCode.OVERSIZED
            ),
            "unroutable_sent": len(cases) - len(routable),
            "unroutable_distinct_bodies": expected_unroutable,
            "unroutable_entries": len(unroutable_entries),
            "missing": len(missing),
            "wrong_field": len(wrong_field),
            "duplicated": len(duplicated),
            "workers_alive": sum(alive.values()),
            "seconds": round(took_s, 1),
        },
    )
    assert finished, f"missing {missing[:5]}; unroutable {len(unroutable_entries)}"
    assert all(alive.values()), alive
    assert missing == []
    assert wrong_field == [], wrong_field[:10]
    assert wrong_code == [], wrong_code[:10]
    assert duplicated == {}
    assert f"{dag}:{good_node}:1" in counted.results
    poison = [
        p for p in unroutable_entries if isinstance(p, ReviewError) and p.code is ErrorCode.POISON
    ]
    assert poison == [], "a resent bad body must not count as a task that killed its worker"
    assert len(unroutable_entries) == expected_unroutable
