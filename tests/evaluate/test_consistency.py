"""Wall consistency: contradictions, conflicting quantities and filters, count mismatches."""

from __future__ import annotations

import json

import pytest

from workers.evaluate.consistency import check_consistency

from .builders import CLEAN_TEXT, GOOD_PYTHON, output


@pytest.mark.parametrize(
    ("kind", "content", "code", "field"),
    [
        (
            "text",
            "The cache is enabled by default in production. "
            "The cache is not enabled by default in production.",
            "Contradiction",
            None,
        ),
        (
            "markdown",
            "# Limits\n\nUploads can exceed ten megabytes. Uploads cannot exceed ten megabytes.",
            "Contradiction",
            None,
        ),
        (
            "text",
            "There are 3 replicas behind the primary database. "
            "Later on, there are 5 replicas serving reads.",
            "ConflictingQuantity",
            None,
        ),
        ("json", json.dumps({"count": 3, "items": [1, 2]}), "CountMismatch", "$.count"),
        (
            "json",
            json.dumps({"report": {"total_users": 2, "users": ["a"], "teams": []}}),
            "CountMismatch",
            "$.report.total_users",
        ),
        (
            "sql",
            "SELECT id FROM orders WHERE status = 'open' AND status = 'closed'",
            "ContradictoryFilter",
            "status",
        ),
        (
            "python",
            "def f():\n    return 1\n\n\ndef f():\n    return 2\n",
            "Redefinition",
            "f",
        ),
    ],
)
def test_inconsistency_is_detected(kind: str, content: str, code: str, field: str | None) -> None:
    found = [f.issue for f in check_consistency(output(kind, content))]
    assert [(i.code, i.field) for i in found] == [(code, field)]
    assert found[0].fix


@pytest.mark.parametrize(
    ("kind", "content"),
    [
        ("text", CLEAN_TEXT),
        (
            "text",
            "The cache is enabled by default in production. "
            "The queue is not enabled by default in staging.",
        ),
        ("text", "There are 3 replicas behind the primary database and 3 replicas in total."),
        ("json", json.dumps({"count": 2, "items": [1, 2]})),
        ("json", json.dumps({"user_count": 1, "users": ["a"]})),
        ("sql", "SELECT id FROM orders WHERE status = 'open' AND region = 'eu'"),
        ("sql", "SELECT id FROM orders WHERE status IN ('open', 'closed')"),
        ("python", GOOD_PYTHON),
    ],
)
def test_consistent_counterpart_is_not_flagged(kind: str, content: str) -> None:
    assert check_consistency(output(kind, content)) == []
