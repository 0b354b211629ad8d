"""Wall substance: filler, repetition, stubs, thin or empty content; clean outputs pass."""

from __future__ import annotations

import json

import pytest

from bench.public.pypi_readmes import load as pypi_readmes
from schemas.request import OutputContract
from workers.evaluate.findings import score_after, words
from workers.evaluate.wall.filler import prose_text
from workers.evaluate.wall.substance import check_substance, distinct_ratio

from .builders import CLEAN_TEXT, GOOD_PYTHON, output
from .realdata import stdlib_source

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


# --- filler is judged in what the output says -----------------------------------------


@pytest.mark.parametrize("module", ["cmd.py", "colorsys.py", "configparser.py", "dis.py"])
def test_todo_and_xxx_comments_in_real_stdlib_modules_are_not_filler(module: str) -> None:
    content = stdlib_source(module)
    assert "# XXX" in content or "# TODO" in content or "#XXX" in content
    assert "Filler" not in _codes("python", content)


@pytest.mark.parametrize(
    ("kind", "content", "filler"),
    [
        (
            "python",
            "def greet(name: str) -> str:\n    # TODO: localise\n    return 'hi ' + name\n",
            False,
        ),
        ("python", "def greet(name: str) -> str:\n    return 'TODO: greeting'\n", True),
        ("python", 'API_KEY = "YOUR_API_KEY_HERE"\nTIMEOUT_S = 30\n', True),
        ("sql", "-- TODO: add an index on total\nSELECT id FROM orders WHERE total > 10", False),
        ("sql", "SELECT id FROM orders WHERE note = 'TBD'", True),
        ("sql", "SELECT column_name FROM placeholder_table", True),
        ("json", json.dumps({"todo": ["buy milk", "call Ann"], "owner": "ann"}), False),
        ("json", json.dumps({"summary": "TODO", "owner": "ann", "risk": "low"}), True),
    ],
)
def test_code_and_data_filler_is_in_their_values_not_their_comments_or_keys(
    kind: str, content: str, filler: bool
) -> None:
    assert ("Filler" in _codes(kind, content)) is filler


LONG_DOC = (
    CLEAN_TEXT + " Rows are encoded as newline-delimited JSON, one object per line, with "
    "dates in ISO 8601 and amounts as strings to keep their precision. A failed batch is "
    "retried twice with a growing delay; after the third failure the job stops, keeps the "
    "file it has written so far, and records the last committed offset so that a rerun "
    "resumes there instead of starting over. Operators can watch progress on the export "
    "dashboard, which shows rows per second, the current offset and the estimated time "
    "left. Large tenants are exported overnight, when the replicas are least loaded, and "
    "the job refuses to start while a schema migration holds the table lock."
)  # about 140 words


def test_a_lone_todo_in_a_long_document_is_a_note_not_filler() -> None:
    assert _codes("text", LONG_DOC + " TODO: add the Q3 figures.") == []
    dense = "Summary: TODO. Risks: TODO. Owner: TBD. " + CLEAN_TEXT
    assert _codes("text", dense) == ["Filler"]
    assert _codes("text", LONG_DOC + " Lorem ipsum dolor sit amet.") == ["Filler"]


def test_code_quoted_in_markdown_is_not_read_as_prose_filler() -> None:
    content = (
        "# Retry helper\n\nWrap the call and retry it three times with backoff.\n\n"
        "```python\ndef call():\n    # TODO: jitter\n    return fetch()\n```\n\n"
        "Use `XXX` as the marker in logs when a retry gives up.\n"
    )
    assert _codes("markdown", content) == []


# --- expected length comes from the contract, the task, or the kind --------------------


@pytest.mark.parametrize(
    ("task", "answer"),
    [
        ("What is the capital of France?", "Paris"),
        ("How many replicas does the primary have?", "3"),
        ("In the draft of the 2017 season, which player did the team pick first?", "Josh Jackson"),
        ("[Human]: What else did Nicholas Sparks write?", "The Notebook"),
        ("Translate 'good morning' into French.", "Bonjour"),
    ],
)
def test_a_short_answer_to_a_question_is_not_thin(task: str, answer: str) -> None:
    assert _codes("text", answer, task=task) == []
    assert _codes("markdown", answer, task=task) == []


@pytest.mark.parametrize(
    "task",
    [
        "Explain how the cache is invalidated.",
        "Please describe the rollout plan.",
        "Can you summarize the incident for the on-call team?",
        "Write a short status note on the search service.",
    ],
)
def test_a_composition_task_still_needs_a_composition(task: str) -> None:
    assert _codes("text", "It works.", task=task) == ["TooThin"]


def test_the_contract_minimum_replaces_the_kind_minimum() -> None:
    contract = OutputContract(min_length=1)
    assert _codes("markdown", "**Paris**") == ["TooThin"]  # markdown is a document kind
    assert _codes("markdown", "**Paris**", contract=contract) == []


def test_short_code_is_judged_by_what_it_does_not_its_size() -> None:
    assert _codes("python", "L = range(10)\n") == []
    assert _codes("sql", "COMMIT") == []
    query_task = "Write the query over search_queries for the search report."
    assert _codes("sql", "SELECT 1;", task=query_task) == ["TooThin"]
    assert _codes("sql", "SELECT term FROM search_queries", task=query_task) == []


def test_big_modules_are_not_bloated() -> None:
    assert len(stdlib_source("argparse.py")) > 90_000
    assert "Bloated" not in _codes("python", stdlib_source("argparse.py") * 2)


# --- a declared contract is the authority on shape ---------------------------------------

# Valid instances from JSON-Schema-Test-Suite draft2020-12 (MIT), tunable items
# (file_stem/group_index/test_index): boolean_schema/0/4, boolean_schema/0/6,
# boolean_schema/0/8, contains/0/5, dependentRequired/2/0, enum/1/0, format/1/5.
SUITE_VALID: list[tuple[object, object]] = [
    (True, None),
    (True, {}),
    (True, []),
    ({"contains": {"minimum": 5}}, {}),
    ({"dependentRequired": {"quux": ["foo", "bar"]}}, {}),
    ({"enum": [6, "foo", [], True, {"foo": 12}]}, []),
    ({"format": "idn-email"}, None),
]


@pytest.mark.parametrize(("schema", "instance"), SUITE_VALID)
def test_json_its_declared_schema_accepts_is_not_empty(schema: object, instance: object) -> None:
    content = json.dumps(instance)
    contract = OutputContract.model_validate_json(json.dumps({"json_schema": schema}))
    assert _codes("json", content, contract=contract) == []
    if instance in ({}, [], None):  # without a contract, emptiness is still judged
        assert _codes("json", content) != []


def _codes(
    kind: str, content: str, *, task: str | None = None, contract: OutputContract | None = None
) -> list[str]:
    return [
        f.issue.code for f in check_substance(output(kind, content), task=task, contract=contract)
    ]


def test_long_varied_prose_is_not_repetitive_however_long() -> None:
    # Real descriptions published on PyPI (tunable items of the pypi-readme benchmark):
    # their plain distinct-word ratio is under 0.3 only because they are long.
    long_ones = {
        c.id: c.request["output"]["content"]
        for c in pypi_readmes().cases
        if c.id in {"fonttools", "tqdm", "charset-normalizer"}
    }
    assert long_ones, "none of the long descriptions is installed"
    for name, content in long_ones.items():
        tokens = words(prose_text(content))
        assert len(set(tokens)) / len(tokens) < 0.3, name
        assert distinct_ratio(tokens) > 0.5, name
        kind = "markdown" if content.lstrip().startswith("#") else "text"
        assert "Repetitive" not in {f.issue.code for f in check_substance(output(kind, content))}


def test_a_long_text_saying_one_thing_again_and_again_is_repetitive() -> None:
    paragraph = "The cache is fast because the cache keeps the hot keys in memory. "
    findings = check_substance(output("text", paragraph * 60))
    assert "Repetitive" in {f.issue.code for f in findings}
