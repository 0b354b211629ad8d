"""What an output cites: URLs, DOIs, reference entries, and which quote goes with which URL."""

from __future__ import annotations

from datetime import date

from tests.evaluate.builders import request
from workers.evaluate.references import plan_lookups
from workers.evaluate.references.extract import cited_urls
from workers.evaluate.references.findings import on_page
from workers.evaluate.wall.grounding.lexicon import squash
from workers.evaluate.wall.grounding.reference_list import future_references, latest_date

NOTE = """\
According to [the incident report](https://status.example.invalid/incident/42), "the outage \
lasted four hours". The fix shipped the next day (https://blog.example.invalid/fix).

Later analysis says "the root cause was a expired certificate" [2], and doi:10.1000/182 \
adds context.

[1] Lee, A. "A Study of Outages" (2021). https://papers.example.invalid/lee
[2] https://certs.example.invalid/post-mortem
"""


def test_links_bare_urls_dois_and_entries_are_cited_once_each_in_order() -> None:
    urls = [c.url for c in cited_urls(NOTE).urls]
    assert urls == [
        "https://status.example.invalid/incident/42",
        "https://blog.example.invalid/fix",
        "https://doi.org/10.1000/182",
        "https://papers.example.invalid/lee",
        "https://certs.example.invalid/post-mortem",
    ]


def test_a_quote_goes_to_the_one_url_in_its_sentence_or_behind_its_marker() -> None:
    cited = {c.url: c for c in cited_urls(NOTE).urls}
    assert cited["https://status.example.invalid/incident/42"].quotes == (
        "the outage lasted four hours",
    )
    assert cited["https://certs.example.invalid/post-mortem"].label == "[2]"
    # the sentence has [2] and a DOI: two candidates, so the quote goes to neither
    assert cited["https://certs.example.invalid/post-mortem"].quotes == ()
    assert cited["https://doi.org/10.1000/182"].quotes == ()
    # a quoted title inside a reference entry is a title, not a quote
    assert cited["https://papers.example.invalid/lee"].quotes == ()


def test_a_marker_alone_attributes_the_quote_to_its_entry() -> None:
    text = 'The report says "the outage lasted four hours" [1].\n\n[1] https://x.invalid/r\n'
    (cited,) = cited_urls(text).urls
    assert cited.quotes == ("the outage lasted four hours",) and cited.label == "[1]"


def test_a_text_fragment_quotes_its_own_url_and_is_never_sent() -> None:
    text = "See https://x.invalid/page#:~:text=prefix-,lasted%20forty%20minutes,-suffix here."
    (cited,) = cited_urls(text).urls
    assert cited.url == "https://x.invalid/page"
    assert cited.quotes == ("lasted forty minutes",)


def test_urls_in_code_are_not_citations() -> None:
    markdown = "Call it:\n\n```python\nrequests.get('https://api.example.invalid/v1')\n```\n"
    markdown += "and `curl https://other.example.invalid` too."
    plan = plan_lookups(
        request(output={"kind": "markdown", "content": markdown}), fetch_urls=True, max_urls=20
    )
    assert plan.empty


def test_wikipedia_parentheses_stay_and_trailing_punctuation_goes() -> None:
    text = "See https://en.wikipedia.invalid/wiki/Mercury_(planet). Also (https://x.invalid/a)."
    assert [c.url for c in cited_urls(text).urls] == [
        "https://en.wikipedia.invalid/wiki/Mercury_(planet)",
        "https://x.invalid/a",
    ]


def test_fetching_off_plans_nothing_and_a_clean_output_plans_nothing() -> None:
    cites = request(output={"kind": "text", "content": NOTE})
    assert plan_lookups(cites, fetch_urls=False, max_urls=20).empty
    assert plan_lookups(request(), fetch_urls=True, max_urls=20).empty


def test_ten_thousand_urls_are_capped_and_the_rest_counted() -> None:
    content = " ".join(f"https://h{i}.example.invalid/p" for i in range(10_000))
    plan = plan_lookups(
        request(output={"kind": "text", "content": content}), fetch_urls=True, max_urls=20
    )
    assert len(plan.urls) == 20
    assert len(plan.skipped) + plan.unlisted == 10_000 - 20


def test_a_100_kb_url_is_listed_by_its_head_and_never_fetched() -> None:
    content = "See https://x.invalid/" + "a" * 100_000 + " for details."
    plan = plan_lookups(
        request(output={"kind": "text", "content": content}), fetch_urls=True, max_urls=20
    )
    assert plan.urls == ()
    assert len(plan.overlong) == 1 and len(plan.overlong[0].url) == 200
    assert not plan.empty and not plan.needs_network


def test_a_reference_dated_after_the_review_is_a_finding() -> None:
    today = date(2026, 12, 6)
    listed = "Text.\n\n## References\n1. Smith, J. (2027). A study. Journal.\n2. Lee (2019).\n"
    (found,) = future_references(listed, today)
    assert "2027-01-01" in found.issue.message and found.issue.code == "FutureReference"
    assert future_references("[1] Lee, A. Outages. Press, 2031.\n", today)
    assert future_references("[1] Report, 3 May 2026.\n", today) == []


def test_plans_and_titles_that_name_a_future_year_are_not_dated_references() -> None:
    today = date(2026, 12, 6)
    assert future_references("Plan:\n1. Launch by March 2031.\n2. Grow.\n", today) == []
    assert future_references("[1] EU. The 2030 Climate Target Plan. 2020.\n", today) == []
    assert latest_date("Accessed 2026-02-30") is None  # no such day


def test_a_quote_with_elisions_or_bracketed_letters_is_found_in_order() -> None:
    page = squash("The outage, which began at noon, lasted forty minutes in all.")
    assert on_page("[T]he outage ... lasted forty minutes", page)
    assert on_page("the outage […] lasted forty minutes", page)
    assert on_page("The outage, which began at noon, lasted forty minutes", page)
    assert not on_page("lasted forty minutes ... the outage", page)  # out of order
    assert not on_page("the outage lasted four hours", page)
