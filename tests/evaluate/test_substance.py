"""Wall substance: filler, repetition, stubs, thin or empty content; clean outputs pass."""

from __future__ import annotations

import json

import pytest

from workers.evaluate.findings import score_after
from workers.evaluate.substance import check_substance

from .builders import CLEAN_TEXT, GOOD_PYTHON, output

CLEAN_MARKDOWN = (
    "# Billing API\n\n## GET /invoices/{id}\n\nReturns one invoice with its line items.\n\n"
    "## POST /invoices\n\nCreates a draft invoice and returns its id.\n"
)


@pytest.mark.parametrize(
    ("kind", "content", "code"),
    [
        (
            "text",
            "Lorem ipsum dolor sit amet, consectetur adipiscing elit, more words here.",
            "Filler",
        ),
        (
            "text",
            "The design section is TODO and the rollout plan is TBD for the moment.",
            "Filler",
        ),
        (
            "markdown",
            "# Plan\n\nInsert content here. This is placeholder text for the plan.",
            "Filler",
        ),
        ("text", " ".join(["the cache is fast"] * 20), "Repetitive"),
        (
            "markdown",
            "# Notes\n\n" + "\n".join(["- the service returns a list of invoices"] * 6),
            "RepeatedLines",
        ),
        ("python", "def load(path):\n    pass\n\ndef save(path):\n    ...\n", "StubBody"),
        ("python", "def load(path):\n    raise NotImplementedError\n", "StubBody"),
        ("python", 'def load(path):\n    """Load it."""\n', "StubBody"),
        ("json", "{}", "EmptyDocument"),
        ("json", '{"a": null, "b": "", "c": " ", "d": 1}', "BlankValues"),
        ("text", "Done.", "TooThin"),
        ("python", '"""Settings."""\nimport os\n', "TooThin"),
    ],
)
def test_substance_defect_is_detected(kind: str, content: str, code: str) -> None:
    findings = check_substance(output(kind, content))
    assert code in [f.issue.code for f in findings]
    assert score_after(findings) < 1.0
    assert all(f.issue.fix for f in findings)


@pytest.mark.parametrize(
    ("kind", "content"),
    [
        ("text", CLEAN_TEXT),
        ("markdown", CLEAN_MARKDOWN),
        ("python", GOOD_PYTHON),
        ("python", "def load(path):\n    with open(path) as f:\n        return f.read()\n"),
        ("json", json.dumps({"name": "svc", "replicas": 3, "tags": ["a", "b"]})),
        ("sql", "SELECT id, total FROM orders WHERE total > 10"),
    ],
)
def test_clean_counterpart_has_no_substance_findings(kind: str, content: str) -> None:
    assert check_substance(output(kind, content)) == []


def test_filler_penalty_grows_with_its_density() -> None:
    light = check_substance(output("text", CLEAN_TEXT + " One section is TODO."))
    heavy = check_substance(output("text", "TODO TBD placeholder FIXME lorem ipsum TODO blah"))
    assert score_after(heavy) < score_after(light) < 1.0


def test_only_stubbed_functions_are_named_in_the_finding() -> None:
    code = GOOD_PYTHON + "\n\ndef later(x):\n    pass\n"
    (found,) = check_substance(output("python", code))
    assert found.issue.field == "later"
    assert "slugify" not in found.issue.message
