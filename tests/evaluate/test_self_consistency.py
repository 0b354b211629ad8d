"""Wall consistency in prose: a thing and its opposite, a claim a count denies, bad counts.

The four defects of issue 21 are caught; their plain, hedged or scoped counterparts are
not; real text no one here wrote (the dev half of the tunable HaluEval right outputs,
CPython's docstrings and the installed packages' READMEs) trips none of the checks; and
no text makes them raise.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.consistency_texts import DOCSTRINGS, in_dev_half, texts
from bench.public import halueval
from bench.public.archives import DataUnavailable
from bench.public.pypi_readmes import BENCHMARK as README
from schemas.quality import Dimension
from workers.evaluate.wall.consistency import check_consistency
from workers.evaluate.wall.scoring import PASS_GRADE, score_wall
from workers.evaluate.wall.self_consistency import self_contradictions

from ..infrastructure import unavailable
from .builders import output

CACHE = (
    "The cache is disabled in production. Every request reads the database. "
    "Because the production cache is enabled, repeated reads are served from memory."
)
TESTS = "All 12 tests passed. Three of the tests failed, so the release is blocked."
ENDPOINTS = (
    "The service exposes three endpoints: /a and /b. Both need a token. "
    "It serves five endpoints in total."
)


def _codes(content: str, kind: str = "text") -> list[str]:
    return [f.issue.code for f in check_consistency(output(kind, content))]


@pytest.mark.parametrize(
    ("content", "code"),
    [(CACHE, "Contradiction"), (TESTS, "CountMismatch"), (ENDPOINTS, "CountMismatch")],
    ids=["polarity", "universal_vs_count", "listed_count"],
)
def test_the_issue_examples_are_caught_and_lower_the_wall(content: str, code: str) -> None:
    assert _codes(content) == [code]
    scores = score_wall(output("text", content))
    assert scores.scores[Dimension.CONSISTENCY] < PASS_GRADE


@pytest.mark.parametrize(
    ("content", "code", "quoted"),
    [
        ("The tests passed. The tests failed.", "Contradiction", "The tests failed"),
        (
            "The production cache is not enabled. The cache in production is enabled.",
            "Contradiction",
            "is not enabled",
        ),
        (
            "The feature is supported on Windows. The feature is unsupported on Windows.",
            "Contradiction",
            "unsupported",
        ),
        ("The cache is currently enabled. The cache is disabled.", "Contradiction", "disabled"),
        ("All 12 passed. Three failed.", "CountMismatch", "Three failed"),
        ("No tests failed. Two tests failed.", "CountMismatch", "Two tests failed"),
        ("None of the 4 builds failed. One build failed.", "CountMismatch", "One build"),
        ("Both replicas are active. One replica is inactive.", "CountMismatch", "One replica"),
        ("The API has three endpoints:\n\n- /a\n- /b\n", "CountMismatch", "lists 2"),
        ("Two endpoints: `/a`, `/b`, `/c` and `/d`.", "CountMismatch", "lists 4"),
        ("A total of 4 endpoints. Five endpoints in total.", "ConflictingQuantity", "4, 5"),
        (
            "The service has a total of 3 endpoints. It serves four endpoints: a, b, c and d.",
            "CountMismatch",
            "total of 3",
        ),
    ],
)
def test_each_kind_of_self_contradiction_is_found(content: str, code: str, quoted: str) -> None:
    (found,) = self_contradictions(content)
    assert found.issue.code == code
    assert quoted in found.issue.message
    assert found.issue.fix


@pytest.mark.parametrize(
    "content",
    [
        "The cache is enabled in production. The cache is disabled in staging.",
        "If the flag is set, the cache is enabled. Otherwise the cache is disabled.",
        "The cache was disabled in 2.0. The cache is enabled.",
        "Three tests failed at first. After the fix, all 12 tests passed.",
        "Some tests are passing. Some tests are failing.",
        "The first test passed. The second test failed.",
        "The tests passed on Linux and failed on Windows.",
        "Most tests passed. Two tests failed.",
        "The server is online. One server is offline.",  # the server: maybe one of many
        "All 12 tests passed on Linux. Three of the tests failed on Windows.",
        "The request is valid. The response is invalid.",
        "The input is not valid JSON. The input is valid YAML.",
        "The cache is not always enabled. The cache is enabled.",
        "He said the cache is enabled. The cache is disabled.",
        "The cache is disabled. Is the cache enabled?",
        "## Linux\n\nThe cache is enabled.\n\n## Windows\n\nThe cache is disabled.",
        "debug : bool\n    The cache is enabled.\nquiet : bool\n    The cache is disabled.",
        "The tool has two modes: read and write, or append.",
        "It was held on two dates: May 1, 2020 and June 2, 2021.",
        "Pick one of three backends: redis, memcached, etc.",
        "The first two endpoints: /a and /b. Three endpoints in total.",
        "Two kinds of tokens and three scopes: read, write and admin.",
        "It follows RFC 1123 names: a, b.",
        "The service exposes three\nendpoints: /a, /b,\nand /c.",
        "Three settings matter:\n\n- a\n- b\n  - b1\n  - b2\n",
        "Three endpoints:\n\n```\n/a\n/b\n```\n",
    ],
)
def test_scoped_hedged_or_consistent_text_is_not_flagged(content: str) -> None:
    assert self_contradictions(content) == []


# --- real text no one here wrote: the dev half, which the checks were tuned on ----------


def test_no_dev_half_cpython_docstring_trips_the_checks() -> None:
    docstrings = list(texts(DOCSTRINGS, dev_only=True))
    assert len(docstrings) > 500
    assert [t.item_id for t in docstrings if self_contradictions(t.content)] == []


def test_no_dev_half_readme_of_an_installed_package_trips_the_checks() -> None:
    readmes = list(texts(README, dev_only=True))
    assert len(readmes) > 10
    assert [t.item_id for t in readmes if self_contradictions(t.content)] == []


@pytest.mark.parametrize("benchmark", list(halueval.LAYOUTS))
def test_no_dev_half_halueval_right_output_trips_the_checks(benchmark: str) -> None:
    right = halueval.LAYOUTS[benchmark].right
    try:
        lines = list(itertools.islice(halueval.lines(benchmark), 1000))
    except DataUnavailable as exc:
        unavailable(f"HaluEval data: {exc}")
        raise
    dev = [(i, r) for i, r in lines if in_dev_half(benchmark, str(i))]
    assert len(dev) > 300
    assert [i for i, r in dev if self_contradictions(str(r[right]))] == []


# --- never raises ------------------------------------------------------------------------

_FRAGMENTS = st.sampled_from(
    [
        "The cache is",
        " not ",
        "enabled",
        "disabled",
        " in production",
        ". ",
        "All 12 tests passed",
        "Three of the tests failed",
        "none of the",
        " three endpoints: ",
        "/a and /b",
        ", ",
        "\n- item",
        "\n  - nested",
        ":\n\n",
        "# Heading\n",
        "``code``",
        "`x`",
        ">>> 1\n",
        "::\n\n    literal\n",
        "a total of 5 endpoints",
        " in total",
        "?",
        "\n",
    ]
)


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_FRAGMENTS, max_size=30), noise=st.text(max_size=200))
def test_the_checks_never_raise_on_any_text(pieces: list[str], noise: str) -> None:
    for content in ("".join(pieces), noise, "".join(pieces) + noise):
        found = self_contradictions(content)
        assert len(found) <= 6
        assert all(f.issue.code and f.issue.fix for f in found)
        check_consistency(output("markdown", content))
