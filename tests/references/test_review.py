"""The in-process review with fetching on, against loopback pages: what each answer decides.

Definite (sent back): 404, 410, a redirect to a 404, a quote missing from an HTML page read
whole. Suspect (never sent back on their own): 403, 429, 5xx, a slow drip, a timeout. A
refused URL is listed and decides nothing. Every fetch goes through the connect guard.
"""

from __future__ import annotations

import ipaddress
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from schemas.references import FetchOutcome, ReferenceVerdict
from schemas.result import Decision, ReviewResult
from tests.evaluate.builders import CLEAN_TEXT, request
from workers.lookups.lane import Lane
from workers.review import Reviewer
from workers.settings import Settings
from workers.testing.net_guard import ConnectGuard, ScriptedResolver
from workers.testing.pages import Page, PageServer, html, redirect

PAGES = {
    "/live": html("After the failover the outage lasted forty minutes in all."),
    "/missing": Page(status=404),
    "/gone": Page(status=410),
    "/moved": redirect("/missing", status=301),
    "/forbidden": Page(status=403),
    "/limited": Page(status=429, headers=(("Retry-After", "1"),)),
    "/broken": Page(status=503),
    "/slow": Page(hold_s=30),
    "/drip": Page(body=b"x" * 10_000, drip_s=0.05),
}
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server() -> Iterator[PageServer]:
    with PageServer(PAGES) as running:
        yield running


def settings(**changes: Any) -> Settings:
    values: dict[str, Any] = {
        "refs_fetch": True,
        "refs_allow_networks": (ipaddress.ip_network("127.0.0.1/32"),),
        "refs_fetch_timeout_s": 1.5,
        "refs_host_spacing_s": 0.0,
        "judge_backend": "builtin",
        "package_index_url": "",  # no package index: only loopback pages are asked
    }
    return Settings(**{**values, **changes})


@pytest.fixture
def reviewer(server: PageServer) -> Reviewer:
    chosen = settings()
    guard = ConnectGuard(allowed={("127.0.0.1", server.port)})
    lane = Lane.build(chosen, None, connect=guard, resolver=ScriptedResolver())
    return Reviewer(chosen, lane=lane)


def citing(url: str, sentence: str = "") -> str:
    return f"{CLEAN_TEXT} {sentence}See the status page [1].\n\n[1] {url}\n"


def review_of(reviewer: Reviewer, content: str) -> ReviewResult:
    return reviewer(request(output={"kind": "text", "content": content}))


@pytest.mark.parametrize("path", ["/missing", "/gone", "/moved"])
def test_a_dead_reference_is_definite_and_sends_the_output_back(
    reviewer: Reviewer, server: PageServer, path: str
) -> None:
    before = server.hits[path]
    result = review_of(reviewer, citing(server.url(path)))
    (issue,) = [i for i in result.stage1.wall.issues if i.code == "DeadReference"]
    assert issue.certainty == "definite"
    assert issue.message.startswith(f"Source [1] {server.url(path)} returns 4")
    assert "confirmed by a second request" in issue.message
    assert result.decision is Decision.ITERATE
    assert result.feedback is not None
    assert any("Source [1]" in i.issue for i in result.feedback.specific_issues)
    (check,) = result.stage1.references
    assert check.verdict is ReferenceVerdict.DEAD and check.label == "[1]"
    assert server.hits[path] == before + 2  # asked twice: confirmed
    assert result.envelope.fetches >= 2


@pytest.mark.parametrize("path", ["/forbidden", "/limited", "/broken", "/slow", "/drip"])
def test_an_ambiguous_answer_is_suspect_and_never_sends_the_output_back(
    reviewer: Reviewer, server: PageServer, path: str
) -> None:
    result = review_of(reviewer, citing(server.url(path)))
    (issue,) = [i for i in result.stage1.wall.issues if i.code == "UnreachableReference"]
    assert issue.certainty == "suspect"
    assert result.decision is Decision.ACCEPT
    assert result.stage1.references[0].verdict is ReferenceVerdict.SUSPECT


def test_a_quote_missing_from_a_page_read_whole_is_a_definite_misquote(
    reviewer: Reviewer, server: PageServer
) -> None:
    content = citing(server.url("/live"), 'The report says "the outage lasted four hours" [1]. ')
    result = review_of(reviewer, content)
    (issue,) = [i for i in result.stage1.wall.issues if i.code == "MisquotedReference"]
    assert issue.certainty == "definite"
    assert result.decision is Decision.ITERATE
    (check,) = result.stage1.references
    assert check.verdict is ReferenceVerdict.MISQUOTED
    assert [q.found for q in check.quotes] == [False]


def test_a_quote_on_the_page_is_supported(reviewer: Reviewer, server: PageServer) -> None:
    content = citing(server.url("/live"), 'It says "the Outage lasted forty minutes" [1]. ')
    result = review_of(reviewer, content)
    assert result.decision is Decision.ACCEPT
    (check,) = result.stage1.references
    assert check.verdict is ReferenceVerdict.LIVE and [q.found for q in check.quotes] == [True]
    assert check.content_sha256 and check.chain[0].address == "127.0.0.1"


def test_a_refused_url_is_listed_never_fetched_and_decides_nothing(server: PageServer) -> None:
    chosen = settings(refs_allow_networks=())
    guard = ConnectGuard()
    reviewer = Reviewer(chosen, lane=Lane.build(chosen, None, connect=guard))
    result = review_of(reviewer, citing(server.url("/missing")))
    assert result.decision is Decision.ACCEPT
    assert [c.verdict for c in result.stage1.references] == [ReferenceVerdict.REFUSED]
    assert result.stage1.references[0].outcome is FetchOutcome.REFUSED
    assert guard.attempts == [] and result.envelope.fetches == 0


def test_with_fetching_off_an_output_that_cites_takes_todays_path(server: PageServer) -> None:
    before = server.requests
    result = review_of(Reviewer(settings(refs_fetch=False)), citing(server.url("/missing")))
    assert result.stage1.references == () and result.decision is Decision.ACCEPT
    assert server.requests == before


def test_a_jsonl_batch_that_cites_one_url_30_times_fetches_it_once(
    server: PageServer, tmp_path: Path
) -> None:
    path = "/live"
    pages = {path: PAGES[path]}
    with PageServer(pages) as own:
        line = request(output={"kind": "text", "content": citing(own.url(path))})
        batch = tmp_path / "batch.jsonl"
        batch.write_text("\n".join(line.model_dump_json() for _ in range(30)) + "\n")
        env = {
            "WINDAGS_REFS_FETCH": "on",
            "WINDAGS_REFS_ALLOW_NETWORKS": "127.0.0.1/32",
            "WINDAGS_JUDGE_BACKEND": "builtin",
            "PATH": "/usr/bin:/bin",
        }
        done = subprocess.run(
            [sys.executable, "-m", "workers.local.cli", "review", "--jsonl", str(batch)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        results = [line for line in done.stdout.splitlines() if line.strip()]
        assert len(results) == 30
        assert own.hits[path] == 1


def test_ten_thousand_urls_and_a_100_kb_url_end_as_listed_references(server: PageServer) -> None:
    chosen = settings()
    resolver = ScriptedResolver()  # every name: NXDOMAIN, answered without the network
    reviewer = Reviewer(
        chosen, lane=Lane.build(chosen, None, connect=ConnectGuard(), resolver=resolver)
    )
    many = " ".join(f"https://h{i}.example.invalid/p" for i in range(10_000))
    huge = "See https://x.example.invalid/" + "a" * 100_000 + " for the details."
    result = review_of(reviewer, f"{CLEAN_TEXT}\n\n{many}\n\n{huge}")
    checks = result.stage1.references
    fetched = [c for c in checks if c.outcome is FetchOutcome.NO_SUCH_HOST]
    assert len(fetched) == chosen.refs_max_urls
    assert len(set(resolver.asked)) == chosen.refs_max_urls  # the rest never looked up
    assert any(c.outcome is FetchOutcome.UNSUPPORTED and len(c.url) == 200 for c in checks)
    assert {c.verdict for c in checks} == {ReferenceVerdict.DEAD, ReferenceVerdict.UNVERIFIED}
    assert len(checks) == 200  # the listed ones; the rest are counted in the plan only
