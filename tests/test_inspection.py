"""What a queue message must be before kombu and Celery see it: refused with a reason, or
delivered (repaired when only its schedule is broken); never an exception, for any bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workers.fleet.app import celery_config
from workers.fleet.queues import TaskName
from workers.fleet.transport.inspection import (
    Accepted,
    Refused,
    Rules,
    UnackedRecord,
    inspect_message,
    unacked_record,
)
from workers.settings import Settings
from workers.testing.raw_messages import (
    REPAIRED_HEADERS,
    Expect,
    encode,
    envelope,
    malformed,
    repaired,
    zipped,
)

TASK = TaskName.STAGE1.value
RULES = Rules(tasks=frozenset(t.value for t in TaskName), max_bytes=200_000, max_eta_s=60)
REQUEST = json.dumps({"dag_id": "d", "node_id": "n"})


def _kinds(tmp_path: Path) -> dict[str, bytes]:
    return {
        m.kind: m.data for m in malformed(TASK, "stage1", marker=tmp_path / "m", huge_bytes=300_000)
    }


def test_every_malformed_kind_is_refused_with_a_reason_and_pickle_is_never_loaded(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "unpickled"
    messages = malformed(TASK, "stage1", marker=marker, huge_bytes=300_000)
    assert len({m.kind for m in messages}) == len(messages) >= 30
    verdicts = {m.kind: inspect_message(m.data, RULES) for m in messages}
    assert all(m.expect is Expect.QUARANTINE for m in messages)
    accepted = [kind for kind, v in verdicts.items() if not isinstance(v, Refused)]
    assert accepted == []
    reasons = {kind: v.reason for kind, v in verdicts.items() if isinstance(v, Refused)}
    assert all(reasons.values())
    assert "unknown task name" in reasons["unknown_task"]
    assert "unknown task name" in reasons["celery_builtin_task"]
    assert "not accepted" in reasons["pickle"] and "not read" in reasons["pickle"]
    assert "base64" in reasons["bad_base64"] or "not JSON" in reasons["bad_base64"]
    assert "bytes; the limit" in reasons["huge"]
    assert "callbacks" in reasons["callbacks"]
    assert "inflates past the limit" in reasons["zip_bomb"]
    assert "x-lzma" in reasons["unknown_compression"]
    assert "does not inflate" in reasons["not_zlib"]
    assert "cut short" in reasons["zlib_cut_short"]
    assert not marker.exists(), "the pickle was deserialized"


def test_a_body_compressed_as_the_fleet_sends_it_is_delivered_as_is() -> None:
    """``task_compression = "zlib"``: kombu inflates the body; the inspection read it so."""
    message = zipped(TASK, [REQUEST], queue="stage1")
    verdict = inspect_message(encode(message), RULES)
    assert isinstance(verdict, Accepted)
    assert verdict.payload == message


def test_a_valid_task_is_delivered_unchanged() -> None:
    message = envelope(TASK, [REQUEST])
    verdict = inspect_message(encode(message), RULES)
    assert isinstance(verdict, Accepted)
    assert verdict.payload == message
    assert verdict.repairs == ()


@pytest.mark.parametrize("kind", sorted(REPAIRED_HEADERS))
def test_a_valid_review_with_a_broken_schedule_is_delivered_without_it(kind: str) -> None:
    verdict = inspect_message(repaired(kind, TASK, REQUEST, "n").data, RULES)
    assert isinstance(verdict, Accepted)
    headers = verdict.payload["headers"]
    if kind == "countdown_garbage":  # Celery never reads it: left alone
        assert verdict.repairs == ()
    else:
        assert len(verdict.repairs) == 1
        assert headers.get("eta") is None and headers.get("expires") is None


def test_an_eta_within_the_bound_is_kept() -> None:
    from datetime import UTC, datetime, timedelta

    soon = (datetime.now(UTC) + timedelta(seconds=10)).isoformat()
    verdict = inspect_message(encode(envelope(TASK, [REQUEST], headers={"eta": soon})), RULES)
    assert isinstance(verdict, Accepted) and verdict.payload["headers"]["eta"] == soon


def test_a_control_reply_queue_gets_only_the_envelope_checks() -> None:
    reply = envelope("not-a-task", [], body=json.dumps({"ok": "pong"}).encode())
    del reply["headers"]["task"]
    assert isinstance(inspect_message(encode(reply), Rules()), Accepted)
    assert isinstance(inspect_message(encode(reply), RULES), Refused)


@pytest.mark.parametrize(
    ("record", "ok"),
    [
        (json.dumps([envelope(TASK, [REQUEST]), "", "stage1"]), True),
        (json.dumps([{"properties": {}}, "", "stage1"]), True),
        ("garbage", False),
        (json.dumps([1, 2]), False),
        (json.dumps([envelope(TASK, [REQUEST]), "", ""]), False),
        (json.dumps([{"properties": {}, "headers": None}, "", "stage1"]), False),
        (json.dumps([{"properties": {"delivery_info": []}}, "", "stage1"]), False),
        (json.dumps(["x", "", "stage1"]), False),
        # Our take's record: kombu's triple and its owner (a rolling upgrade holds both).
        (json.dumps([envelope(TASK, [REQUEST]), "", "stage1", "host:12:ab"]), True),
        (json.dumps([envelope(TASK, [REQUEST]), "", "stage1", 7]), False),
        (json.dumps([envelope(TASK, [REQUEST]), "", "stage1", "o", "more"]), False),
    ],
)
def test_an_unacked_record_is_restorable_or_refused(record: str, ok: bool) -> None:
    assert isinstance(unacked_record(record), UnackedRecord) is ok


def test_an_unacked_record_names_its_owner_when_it_has_one() -> None:
    message = envelope(TASK, [REQUEST])
    old = unacked_record(json.dumps([message, "", "stage1"]))
    new = unacked_record(json.dumps([message, "", "stage1", "host:12:ab"]))
    assert isinstance(old, UnackedRecord) and isinstance(new, UnackedRecord)
    assert (old.owner, new.owner) == (None, "host:12:ab")
    # Either restores as kombu's triple: the owner never reaches the queue.
    assert old.restorable() == new.restorable() == (message, "", "stage1")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
_PLACES = ["body", "content-type", "content-encoding", "headers", "properties"]
_HEADERS = ["task", "id", "eta", "expires", "retries", "timelimit", "stamps", "shadow", "is_eager"]


@st.composite
def _mutated(draw: st.DrawFn) -> bytes:
    message: dict[str, Any] = envelope(TASK, [REQUEST])
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(["top", "headers", "properties"]))
        holder = message if where == "top" else message.get(where)
        if not isinstance(holder, dict):
            continue
        key = draw(st.sampled_from(_PLACES if where == "top" else [*_HEADERS, "delivery_tag"]))
        if draw(st.booleans()):
            holder.pop(key, None)
        else:
            holder[key] = draw(_json)
    return json.dumps(message).encode()


_FUZZ = settings(
    max_examples=600, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


@_FUZZ
@given(st.binary(max_size=300) | _mutated() | _json.map(lambda v: json.dumps(v).encode()))
def test_inspection_never_raises_and_every_refusal_has_a_reason(raw: bytes) -> None:
    verdict = inspect_message(raw, RULES)
    if isinstance(verdict, Refused):
        assert verdict.reason
    else:
        assert isinstance(verdict.payload["properties"]["delivery_tag"], str)
        assert verdict.payload["content-type"] == "application/json"


@_FUZZ
@given(st.binary(max_size=200) | _json.map(lambda v: json.dumps(v).encode()))
def test_unacked_records_never_raise(raw: bytes) -> None:
    unacked_record(raw)


def test_kinds_are_distinct_bytes(tmp_path: Path) -> None:
    kinds = _kinds(tmp_path)
    assert len(set(kinds.values())) == len(kinds)


def test_the_fleet_compresses_unless_told_not_to_for_an_upgrade() -> None:
    """Workers of a release before compression refuse zlib bodies: it can be turned off."""
    assert celery_config(Settings())["task_compression"] == "zlib"
    assert celery_config(Settings(compress_messages=False))["task_compression"] is None
