"""The refs lane in a running fleet: real workers, real Redis, loopback pages only.

A URL cited by a hundred reviews is fetched once within its cache time; one host never has
more than two requests in flight across the fleet; an output that cites nothing never
enters the refs queue.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
import redis

from schemas.hops import Stage1Report
from schemas.references import ReferenceVerdict
from schemas.result import ReviewResult
from schemas.stages import Certainty
from tests.evaluate.builders import CLEAN_TEXT, obj
from tests.infrastructure import SHORT_LIMITS, wait_until
from tests.integration.support import fresh_dag, read_stream
from workers.client import ReviewClient
from workers.fleet.deps import build_deps
from workers.fleet.handlers import handle_refs, handle_stage1
from workers.fleet.next_hop import Hop
from workers.fleet.queues import Queue, TaskName
from workers.local.launcher import LocalFleet
from workers.settings import Settings
from workers.testing.package_index import index_server
from workers.testing.pages import Page, PageServer, gzip_bomb, html, redirect

pytestmark = pytest.mark.integration
PAGES = {
    "/cited": html("one page cited by every review", status=200),
    "/drip": Page(body=b"x" * 10_000, drip_s=0.2),
    "/bomb": gzip_bomb(200 * 1024 * 1024),
    "/huge": Page(body=b"<p>", length=5 * 1024**3),
    "/loop": redirect("/loop"),
    "/latin": Page(body=b"caf\xe9 \xff\xfe", content_type="text/plain"),
    **{f"/h{i}": Page(body=b"<p>held</p>", hold_s=0.3) for i in range(20)},
}


@pytest.fixture(scope="module")
def pages() -> Iterator[PageServer]:
    with PageServer(PAGES) as running:
        yield running


@pytest.fixture(scope="module")
def fleet_env(pages: PageServer) -> dict[str, str]:
    return {
        "WINDAGS_KEY_PREFIX": f"it-refs-{uuid.uuid4().hex[:8]}",
        "WINDAGS_JUDGE_BACKEND": "builtin",
        "WINDAGS_REFS_FETCH": "on",
        "WINDAGS_REFS_ALLOW_NETWORKS": "127.0.0.1/32",
        "WINDAGS_REFS_HOST_SPACING_S": "0",
        # Room for an output citing 10,000 loopback URLs (literal addresses: no DNS query).
        "WINDAGS_MAX_OUTPUT_CHARS": "400000",
        **SHORT_LIMITS,
        # Within the short visibility timeout: budget + one fetch < soft < hard < 30 s.
        "WINDAGS_REFS_BUDGET_S": "8",
        "WINDAGS_REFS_FETCH_TIMEOUT_S": "5",
        "WINDAGS_REFS_SOFT_LIMIT_S": "15",
        "WINDAGS_REFS_HARD_LIMIT_S": "20",
    }


def citing(dag: str, node: str, url: str) -> dict[str, object]:
    content = f"{CLEAN_TEXT} The figures are on the status page [1].\n\n[1] {url}\n"
    return obj(dag_id=dag, node_id=node, output={"kind": "text", "content": content})


def results(db: redis.Redis, settings: Settings, dag: str, count: int) -> list[ReviewResult]:
    assert wait_until(lambda: db.xlen(settings.keys.results(dag)) >= count, timeout_s=120)
    found = [p for _, p in read_stream(db, settings, dag) if isinstance(p, ReviewResult)]
    assert len(found) == count
    return found


def test_a_url_cited_by_100_reviews_is_fetched_once(
    fleet: LocalFleet,
    client: ReviewClient,
    redis_db: redis.Redis,
    settings: Settings,
    pages: PageServer,
) -> None:
    dag = fresh_dag()
    url = pages.url("/cited")
    client.submit_many([citing(dag, f"n{i}", url) for i in range(100)])
    found = results(redis_db, settings, dag, 100)
    chains = Counter(str(r.stage1.references[0].chain) for r in found if r.envelope.fetches)
    assert pages.hits["/cited"] == 1, chains  # what each fetch saw, should one be repeated
    assert sum(r.envelope.fetches for r in found) == 1
    assert {r.stage1.references[0].verdict for r in found} == {ReferenceVerdict.LIVE}
    assert {r.decision.value for r in found} == {"accept"}


def test_one_host_never_has_more_than_two_requests_in_flight(
    fleet: LocalFleet, client: ReviewClient, redis_db: redis.Redis, settings: Settings
) -> None:
    with PageServer(PAGES) as host:
        dag = fresh_dag()
        client.submit_many([citing(dag, f"n{i}", host.url(f"/h{i}")) for i in range(20)])
        results(redis_db, settings, dag, 20)
        assert sum(host.hits[f"/h{i}"] for i in range(20)) == 20
        assert host.max_in_flight == 2  # the limit bound: 20 reviews were there at once


def test_only_an_output_that_cites_something_goes_to_the_refs_queue(
    settings: Settings, pages: PageServer
) -> None:
    deps = build_deps(settings)
    try:
        dag = fresh_dag()
        plain = handle_stage1(json.dumps(obj(dag_id=dag, node_id="plain")), deps)
        cites = handle_stage1(json.dumps(citing(dag, "cites", pages.url("/cited"))), deps)
    finally:
        deps.close()
    assert isinstance(plain, Hop) and plain.task is TaskName.ROUTER
    assert isinstance(cites, Hop) and cites.task is TaskName.REFS


def test_a_package_the_snapshot_lacks_is_confirmed_by_the_index_in_the_refs_lane(
    settings: Settings,
) -> None:
    gone = "never-registered-project-xyz"
    content = f"Install it:\n\n`pip install {gone}`\n\nThen configure the client as usual."
    with index_server(["fresh-project-after-snapshot"]) as index:
        chosen = settings.model_copy(update={"package_index_url": index.url})
        deps = build_deps(chosen)
        try:
            asked = obj(
                dag_id=fresh_dag(), node_id="pkg", output={"kind": "markdown", "content": content}
            )
            hop = handle_stage1(json.dumps(asked), deps)
            assert isinstance(hop, Hop) and hop.task is TaskName.REFS
            before = Stage1Report.model_validate_json(hop.args[2])
            identity, request_json, report_json = hop.args
            routed = handle_refs(identity, request_json, report_json, deps)
        finally:
            deps.close()
        assert index.requests[gone] == 1
    assert isinstance(routed, Hop) and routed.task is TaskName.ROUTER
    after = Stage1Report.model_validate_json(routed.args[2])
    assert [i.certainty for i in before.stage1.wall.issues if i.code == "UnknownPackage"] == [
        Certainty.SUSPECT
    ]
    assert [i.certainty for i in after.stage1.wall.issues if i.code == "UnknownPackage"] == [
        Certainty.DEFINITE
    ]
    assert after.quality.grounding.gate is not None
    assert after.quality.grounding.gate < before.quality.grounding.gate  # type: ignore[operator]


def test_hostile_pages_and_urls_end_as_typed_references_and_the_refs_worker_lives_on(
    fleet: LocalFleet,
    client: ReviewClient,
    redis_db: redis.Redis,
    settings: Settings,
    pages: PageServer,
) -> None:
    dag = fresh_dag()
    urls = [pages.url(p) for p in ("/drip", "/bomb", "/huge", "/loop", "/latin")]
    urls.append(pages.url("/") + "a" * 100_000)  # never fetched: too long
    asked = [citing(dag, f"n{i}", url) for i, url in enumerate(urls)]
    many = " ".join(pages.url(f"/many/{i}") for i in range(10_000))
    asked.append(obj(dag_id=dag, node_id="many", output={"kind": "text", "content": many}))
    client.submit_many(asked)
    found = {r.node_id: r for r in results(redis_db, settings, dag, len(asked))}
    outcomes = [found[f"n{i}"].stage1.references[0].outcome.value for i in range(len(urls))]
    assert outcomes == ["timeout", "ok", "ok", "too_many_redirects", "ok", "unsupported"]
    assert len(found["many"].stage1.references) == 200
    assert sum(pages.hits[f"/many/{i}"] for i in range(10_000)) == 2 * settings.refs_max_urls
    assert fleet.workers[Queue.REFS].poll() is None
