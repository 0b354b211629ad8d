"""Wall grounding: citations, years, URLs, unsupported claims, undefined names and aliases."""

from __future__ import annotations

import pytest

from workers.evaluate.wall.grounding.checks import check_grounding

from .builders import CLEAN_TEXT, GOOD_PYTHON, output
from .realdata import stdlib_source


@pytest.mark.parametrize(
    ("kind", "content", "code", "field"),
    [
        (
            "text",
            "Caching halves latency [1]. Batching helps too [2].\n\n[1] Smith, Caching, 2019.",
            "DanglingCitation",
            "citations",
        ),
        (
            "text",
            "Latency fell sharply after the change (Smith, 2087) in our measurements.",
            "FabricatedCitation",
            "citations",
        ),
        (
            "text",
            "Latency fell sharply after the change (Smith et al., 1650) in our measurements.",
            "FabricatedCitation",
            "citations",
        ),
        (
            "text",
            "See the setup guide at http:/example.com/docs for details.",
            "MalformedURL",
            "urls",
        ),
        ("markdown", "# Docs\n\nRead https://exa mple.com first.", "MalformedURL", "urls"),
        (
            "text",
            "Studies show that caching helps every workload we have ever run in production.",
            "UnsupportedClaim",
            "claims",
        ),
        (
            "text",
            "According to experts, 87% of developers prefer this library over the others.",
            "UnsupportedClaim",
            "claims",
        ),
        ("python", "def total(xs):\n    return sum(xs) + offset\n", "UndefinedName", "offset"),
        (
            "sql",
            "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id "
            "WHERE x.flag = 1",
            "UnknownReference",
            "x.flag",
        ),
    ],
)
def test_grounding_defect_is_detected(kind: str, content: str, code: str, field: str) -> None:
    found = [f.issue for f in check_grounding(output(kind, content))]
    assert (code, field) in [(i.code, i.field) for i in found]
    assert all(i.fix for i in found)


@pytest.mark.parametrize(
    ("kind", "content"),
    [
        ("text", CLEAN_TEXT),
        (
            "text",
            "Caching halves latency [1]. Batching helps too [2].\n\n"
            "[1] Smith, Caching, 2019.\n[2] Jones, Batching, 2021.",
        ),
        ("text", "Latency fell sharply after the change (Smith, 2019) in our measurements."),
        ("text", "See the setup guide at https://example.com/docs/setup?x=1 for details."),
        (
            "text",
            "Studies show that caching helps every workload [1].\n\n[1] Smith, Caching, 2019.",
        ),
        ("python", GOOD_PYTHON),
        (
            "python",
            "from os.path import join\n\n\ndef at(root, name):\n    return join(root, name)\n",
        ),
        (
            "sql",
            "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id "
            "WHERE o.flag = 1",
        ),
        (
            "sql",
            "WITH recent AS (SELECT id FROM orders) SELECT recent.id FROM recent",
        ),
    ],
)
def test_grounded_counterpart_is_not_flagged(kind: str, content: str) -> None:
    assert check_grounding(output(kind, content)) == []


def test_star_import_disables_the_undefined_name_check() -> None:
    code = "from math import *\n\n\ndef area(r):\n    return pi * r * r\n"
    assert check_grounding(output("python", code)) == []


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT structs.one.a_1 FROM structs",
        "WITH c AS (SELECT FROM_JSON(v, 'STRUCT<f1: INT>') AS s FROM t) SELECT s.f1 FROM c",
        "SELECT u.v FROM t CROSS JOIN UNNEST(t.items) AS u(v)",
    ],
)
def test_struct_paths_and_named_row_sources_are_not_unknown_references(sql: str) -> None:
    found = check_grounding(output("sql", sql))
    assert [f.issue.code for f in found] == []


def test_a_qualifier_nothing_defines_is_still_an_unknown_reference() -> None:
    found = check_grounding(output("sql", "SELECT z.a FROM t"))
    assert [f.issue.code for f in found] == ["UnknownReference"]


def test_url_prefixes_and_templates_in_code_are_not_malformed_links() -> None:
    # pydoc: ``docloc.startswith(("http://", "https://"))`` and ``'http://%s:%d/' % (...)``.
    source = stdlib_source("pydoc.py")
    assert 'startswith(("http://", "https://"))' in source
    assert "MalformedURL" not in {f.issue.code for f in check_grounding(output("python", source))}
    code = 'host = "h"\nbase = f"https://{host}/api"\nprefix = "http://"\n'
    assert check_grounding(output("python", code)) == []
    # A literal is data the program handles (a broken URL a parser test feeds in); the
    # docstring is what the program tells its reader.
    assert check_grounding(output("python", 'BROKEN = "http:/example.com/docs"\n')) == []
    documented = '"""Client for the API; docs at http:/example.com/docs."""\n'
    assert [f.issue.code for f in check_grounding(output("python", documented))] == ["MalformedURL"]


@pytest.mark.parametrize(
    "content",
    [
        "Compression follows the extension (RFC 7692); dates are ISO 8601 (ISO 8601).",
        "Send traces to `http://collector:4318` or to http://localhost/v1/traces.",
        r"Print `\x1b]8;;http://example.com\x07Click\x1b]8;;\x07` to make a link.",
        "Both http: and https: schemes work; point it at http://<host>:<port>/.",
    ],
)
def test_real_documentation_idioms_are_not_grounding_defects(content: str) -> None:
    # Each from a description published on PyPI (websocket-client, this project, wcwidth,
    # httpcore2): a document number is not an author-year citation, and a link ends at a
    # backtick, a backslash escape or a placeholder's bracket.
    assert check_grounding(output("markdown", content)) == []


def test_a_real_author_with_an_impossible_year_is_still_fabricated() -> None:
    found = check_grounding(output("text", "Caching always helps (Smith, 2150)."))
    assert [f.issue.code for f in found] == ["FabricatedCitation"]


@pytest.mark.parametrize(
    ("url", "followable"),
    [
        ("HTTPS://jo%40email.com:a%20secret@müller.de:1234/pa%20th?search=ab#anchor", True),
        ("http://[::1]:8080/", True),
        ("http://collector:4318/v1/traces", True),
        ("http://localhost/health", True),
        ("http://[::1/", False),
        ("http://example.com:99999/", False),
        ("http:/example.com/docs", False),
        ("https://exa", False),
        ("https://rr-.github.io/docstring_parser/", True),
        ("http://exa_mple..com/", False),
    ],
)
def test_links_are_read_with_a_url_parser(url: str, followable: bool) -> None:
    found = check_grounding(output("markdown", f"See {url} for details."))
    assert (found == []) is followable, found
