"""Each look-up has a span; the metrics count sources, requests, statuses and refusals."""

from __future__ import annotations

import ipaddress
import time

from schemas.references import CitedUrl
from tests.test_telemetry import Captured, captured  # noqa: F401  (the fixture)
from workers.lookups.lane import Lane
from workers.settings import Settings
from workers.testing.net_guard import ConnectGuard, ScriptedResolver
from workers.testing.pages import Page, PageServer, html


def test_a_fetch_a_cache_hit_and_a_refusal_are_each_spanned_and_counted(
    captured: Captured,  # noqa: F811
) -> None:
    chosen = Settings(
        refs_fetch=True,
        refs_allow_networks=(ipaddress.ip_network("127.0.0.1/32"),),
        refs_host_spacing_s=0.0,
        package_index_url="",
    )
    with PageServer({"/ok": html("hello"), "/gone": Page(status=410)}) as server:
        guard = ConnectGuard(allowed={("127.0.0.1", server.port)})
        resolver = ScriptedResolver(answers={"inside.invalid": ["10.0.0.1"]})
        lane = Lane.build(chosen, None, connect=guard, resolver=resolver)
        deadline = time.monotonic() + 30
        for url in (server.url("/ok"), server.url("/ok"), server.url("/gone")):
            lane.look_up(CitedUrl(url=url), deadline)
        lane.look_up(CitedUrl(url=f"http://inside.invalid:{server.port}/"), deadline)
    spans = [s for s in captured.spans.get_finished_spans() if s.name == "windags.refs.fetch"]
    assert [s.attributes["windags.refs.source"] for s in spans if s.attributes] == [
        "own",
        "cache",
        "own",
        "own",
    ]
    gone = spans[2].attributes or {}
    assert gone["http.response.status_code"] == 410 and gone["windags.refs.requests"] == 2
    assert gone["network.peer.address"] == "127.0.0.1" and gone["windags.refs.confirmed"]
    lookups = {
        (p.attributes["source"], p.attributes["outcome"]): p.value
        for p in captured.points("windags.refs.lookups")
    }
    assert lookups == {
        ("own", "ok"): 1,
        ("cache", "ok"): 1,
        ("own", "gone"): 1,
        ("own", "refused"): 1,
    }
    requests = {p.attributes["status"]: p.value for p in captured.points("windags.refs.requests")}
    assert requests == {"200": 1, "410": 2}
    assert [p.value for p in captured.points("windags.refs.refusals")] == [1]
