"""The URL half of the references bench: ``python -m bench.url_refs``.

Every request goes to servers this process starts on loopback (``workers.testing.pages``),
through a connect guard that refuses any other address. It reports:

- each row of the status table: what a cited page's answer made of a review (outcome,
  verdict, certainty, decision, requests sent), beside what the table says it must;
- quotes: found, missing from a page read whole, missing from a page read in part;
- the cache and single flight: a URL cited 30 times by an in-process batch, and looked up
  100 times at once by 4 lanes sharing Redis (as 4 refs workers would);
- politeness: the most requests one host held at once, in memory and through Redis;
- refusals: connections attempted for each SSRF spelling of loopback (must be 0);
- what fetching on costs an output that cites nothing: in-process review times with the
  lane off and on, side by side in one run, over HumanEval's tunable items;
- dated references on public data: how many right outputs the always-on
  ``FutureReference`` check flags (dev and test halves of every tunable item): README and
  HaluEval prose as the Wall reads it, and Python docstrings (more than the Wall reads:
  of a Python output it reads no prose).

Writes bench/results/url_refs.json.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from statistics import median
from typing import Any

import redis

from bench import common
from bench.public import cpython_stdlib, halueval, humaneval, pypi_readmes
from bench.public.case import GOOD
from bench.public.heldout import half_of
from schemas.references import CitedUrl, FetchOutcome
from schemas.request import ReviewRequest
from workers.evaluate import run_stage1
from workers.evaluate.references.statuses import TABLE
from workers.evaluate.wall.grounding.claims import prose_of
from workers.evaluate.wall.grounding.links import stated_texts
from workers.evaluate.wall.grounding.reference_list import future_references
from workers.lookups.lane import Lane
from workers.lookups.steps import plan_for
from workers.review import Reviewer
from workers.settings import Settings
from workers.testing.net_guard import (
    LOOPBACK_SPELLINGS,
    SCRIPTED_LOOPBACK,
    ConnectGuard,
    ScriptedResolver,
    all_at_once,
)
from workers.testing.pages import Page, PageServer, gzip_bomb, html, redirect

TEXT = (
    "The export job streams rows from the database in batches of five hundred. "
    "Each batch is written before the next one is read, so memory use stays flat."
)
LIVE = "After the failover the outage lasted forty minutes in all."
SCENARIOS: dict[str, tuple[Page | None, FetchOutcome]] = {
    "200": (html(LIVE), FetchOutcome.OK),
    "404": (Page(status=404), FetchOutcome.NOT_FOUND),
    "410": (Page(status=410), FetchOutcome.GONE),
    "301 -> 404": (redirect("/404", status=301), FetchOutcome.NOT_FOUND),
    "NXDOMAIN": (None, FetchOutcome.NO_SUCH_HOST),
    "SERVFAIL": (None, FetchOutcome.DNS_FAILED),
    "401": (Page(status=401), FetchOutcome.UNAUTHORIZED),
    "403": (Page(status=403), FetchOutcome.FORBIDDEN),
    "429": (Page(status=429, headers=(("Retry-After", "5"),)), FetchOutcome.RATE_LIMITED),
    "451": (Page(status=451), FetchOutcome.LEGAL),
    "500": (Page(status=500), FetchOutcome.SERVER_ERROR),
    "503": (Page(status=503), FetchOutcome.SERVER_ERROR),
    "400": (Page(status=400), FetchOutcome.OTHER_STATUS),
    "no answer in time": (Page(hold_s=30), FetchOutcome.TIMEOUT),
    "slow drip": (Page(body=b"x" * 10_000, drip_s=0.05), FetchOutcome.TIMEOUT),
    "TLS to a plain server": (html(LIVE), FetchOutcome.TLS_ERROR),
    "connection refused": (None, FetchOutcome.CONNECTION_FAILED),
    "redirect loop": (redirect("/redirect-loop"), FetchOutcome.TOO_MANY_REDIRECTS),
    "not HTTP": (Page(raw=b"\x00garbage\r\n\r\n"), FetchOutcome.BAD_RESPONSE),
    "gzip bomb (200 MiB)": (gzip_bomb(200 * 1024 * 1024), FetchOutcome.OK),
    "5 GB Content-Length": (Page(body=b"<p>", length=5 * 1024**3), FetchOutcome.OK),
    "private address": (None, FetchOutcome.REFUSED),
}


def settings(prefix: str = "bench-refs", **changes: Any) -> Settings:
    values: dict[str, Any] = {
        "judge_backend": "builtin",
        "refs_fetch": True,
        "refs_allow_networks": (ipaddress.ip_network("127.0.0.1/32"),),
        "refs_fetch_timeout_s": 1.5,
        "refs_host_spacing_s": 0.0,
        "refs_max_body_bytes": 256 * 1024,
        "key_prefix": prefix,
        "package_index_url": "",  # no package index: only loopback pages are asked
    }
    return Settings(**{**values, **changes})


def request(content: str, node: str = "n") -> ReviewRequest:
    return common.build_request(common.review_obj("bench-refs", node, content=content))


def citing(url: str, sentence: str = "") -> str:
    return f"{TEXT} {sentence}See the status page [1].\n\n[1] {url}\n"


@contextmanager
def guarded(
    server: PageServer, chosen: Settings, db: redis.Redis | None = None, *ports: int
) -> Iterator[Lane]:
    guard = ConnectGuard(allowed={("127.0.0.1", p) for p in (server.port, *ports)})
    resolver = ScriptedResolver(
        answers={"private.invalid": ["10.0.0.1"], "loopback.invalid": ["127.0.0.1"]},
        failing=frozenset({"flaky.invalid"}),
    )
    yield Lane.build(chosen, db, connect=guard, resolver=resolver)


def status_rows() -> list[dict[str, Any]]:
    pages = {_path(name): page for name, (page, _) in SCENARIOS.items() if page is not None}
    rows = []
    closed = _closed_port()
    with PageServer(pages) as server:
        for name, (_, expected) in SCENARIOS.items():
            url = _scenario_url(server, name, closed)
            chosen = settings()
            with guarded(server, chosen, None, closed) as lane:
                result = Reviewer(chosen, lane=lane)(request(citing(url)))
            (check,) = result.stage1.references
            issues = [i for i in result.stage1.wall.issues if i.field == "references"]
            row = TABLE[expected]
            rows.append(
                {
                    "answer": name,
                    "outcome": check.outcome.value,
                    "expected": expected.value,
                    "verdict": check.verdict.value,
                    "certainty": issues[0].certainty.value if issues else "none",
                    "table_certainty": row.certainty.value if row.certainty else "none",
                    "decision": result.decision.value,
                    "requests": result.envelope.fetches,
                    "chain": " -> ".join(str(h.status or "-") for h in check.chain),
                    "agrees": check.outcome is expected,
                }
            )
    return rows


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _scenario_url(server: PageServer, name: str, closed: int) -> str:
    port = server.port
    special = {
        "NXDOMAIN": f"http://nowhere.invalid:{port}/",
        "SERVFAIL": f"http://flaky.invalid:{port}/",
        "TLS to a plain server": f"https://127.0.0.1:{port}{_path('200')}",
        "connection refused": f"http://127.0.0.1:{closed}/",
        "private address": f"http://private.invalid:{port}/",
    }
    return special.get(name) or server.url(_path(name))


def _path(name: str) -> str:
    """A scenario's path on the server: ``404`` -> ``/404``, ``slow drip`` -> ``/slow-drip``."""
    return "/" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def quote_rows() -> list[dict[str, Any]]:
    cases = {
        "quote on the page": ("/page", 'It says "the Outage lasted forty minutes" [1]. '),
        "quote missing, HTML read whole": ("/page", 'It says "the outage lasted four hours" [1]. '),
        "quote missing, page read in part": (
            "/long",
            'It says "the outage lasted four hours" [1]. ',
        ),
    }
    pages = {"/page": html(LIVE), "/long": Page(body=b"<p>" + b"x " * 300_000)}
    rows = []
    with PageServer(pages) as server:
        for name, (path, sentence) in cases.items():
            chosen = settings()
            with guarded(server, chosen) as lane:
                result = Reviewer(chosen, lane=lane)(request(citing(server.url(path), sentence)))
            (check,) = result.stage1.references
            issues = [i for i in result.stage1.wall.issues if i.field == "quotes"]
            rows.append(
                {
                    "case": name,
                    "found": [q.found for q in check.quotes],
                    "verdict": check.verdict.value,
                    "certainty": issues[0].certainty.value if issues else "none",
                    "decision": result.decision.value,
                }
            )
    return rows


def cache_and_flight(url: str) -> dict[str, Any]:
    """30 citations in one in-process batch; 100 look-ups at once by 4 lanes on Redis."""
    pages = {"/cited": Page(body=LIVE.encode(), content_type="text/html", hold_s=0.2)}
    out: dict[str, Any] = {}
    with PageServer(pages) as server:
        chosen = settings()
        with guarded(server, chosen) as lane:
            reviewer = Reviewer(chosen, lane=lane)
            fetched = [reviewer(request(citing(server.url("/cited")), f"n{i}")) for i in range(30)]
        out["batch_citations"] = 30
        out["batch_requests_sent"] = server.hits["/cited"]
        out["batch_envelope_fetches"] = sum(r.envelope.fetches for r in fetched)
    with PageServer(pages) as server, _prefix(url) as (db, prefix):
        chosen = settings(prefix)
        lanes = []
        for _ in range(4):
            with guarded(server, chosen, db) as lane:
                lanes.append(lane)
        cited = CitedUrl(url=server.url("/cited"))
        pages_seen = all_at_once(100, lambda i: lanes[i % 4].look_up(cited, time.monotonic() + 30))
        out["concurrent_lookups"] = 100
        out["concurrent_requests_sent"] = server.hits["/cited"]
        out["concurrent_cache_hits"] = sum(1 for p in pages_seen if p.cached)
    return out


def host_limits(url: str) -> dict[str, Any]:
    """20 URLs of one host looked up at once (each answer held 0.2 s)."""
    pages = {f"/p{i}": Page(body=b"<p>x</p>", hold_s=0.2) for i in range(20)}
    out: dict[str, Any] = {}
    for backend in ("memory", "redis"):
        with PageServer(pages) as server, _prefix(url) as (db, prefix):
            chosen = settings(prefix, refs_host_spacing_s=0.0)
            with guarded(server, chosen, db if backend == "redis" else None) as lane:
                _look_up_all(lane, [CitedUrl(url=server.url(f"/p{i}")) for i in range(20)])
            out[backend] = {"requests": server.requests, "max_in_flight": server.max_in_flight}
    out["limit"] = settings().refs_host_in_flight
    return out


def _look_up_all(lane: Lane, urls: list[CitedUrl]) -> None:
    all_at_once(len(urls), lambda i: lane.look_up(urls[i], time.monotonic() + 60))


def refusals() -> dict[str, int]:
    """Connections attempted for each spelling of loopback, with no network allowed."""
    attempts: dict[str, int] = {}
    with PageServer({"/": html("hello")}) as server:
        chosen = settings(refs_allow_networks=())
        for host in LOOPBACK_SPELLINGS:
            guard = ConnectGuard(allowed={("127.0.0.1", server.port)})
            resolver = ScriptedResolver(answers=SCRIPTED_LOOPBACK)
            lane = Lane.build(chosen, None, connect=guard, resolver=resolver)
            page = lane.look_up(CitedUrl(url=server.url("/", host=host)), time.monotonic() + 5)
            attempts[host] = len(guard.attempts) + server.requests
            assert page.outcome is FetchOutcome.REFUSED, (host, page.outcome)
    return attempts


def cite_nothing_cost(rounds: int) -> dict[str, Any]:
    """In-process review times with fetching off and on, for outputs that cite nothing.

    Side by side in one run: every item is reviewed by both, in an order that alternates
    round by round (an even number of rounds: the engine's small caches favour whichever
    reviews an item second, so each goes first as often), after one warm-up round that is
    not counted.
    """
    rounds += rounds % 2
    asked: list[tuple[str, ReviewRequest]] = []
    for module in (humaneval, cpython_stdlib):
        loaded = module.load()
        for c in loaded.cases:
            content = c.request["output"]["content"]
            if c.label == GOOD and "http" not in content and "doi" not in content.lower():
                asked.append(
                    (half_of(loaded.benchmark, c.id).value, common.build_request(c.request))
                )
    reviewers = {"off": Reviewer(settings(refs_fetch=False)), "on": Reviewer(settings())}
    # times[setting][i]: every counted time of item i.
    times: dict[str, list[list[float]]] = {"off": [[] for _ in asked], "on": [[] for _ in asked]}
    for round_ in range(rounds + 1):
        order = ["off", "on"] if round_ % 2 else ["on", "off"]
        for i, (_, request_) in enumerate(asked):
            for name in order:
                started = time.perf_counter()
                reviewers[name](request_)
                if round_:
                    times[name][i].append((time.perf_counter() - started) * 1000)
    out: dict[str, Any] = {"outputs": len(asked), "rounds": rounds}
    out["plan_us_per_output"] = _plan_cost(settings(), [r for _, r in asked])
    for which in sorted({half for half, _ in asked}):
        items = [i for i, (half, _) in enumerate(asked) if half == which]
        out[which] = {"outputs": len(items)}
        for stat, pick in (("all", None), ("best_of_rounds", min)):
            p95 = {}
            for name in ("off", "on"):
                values = [
                    v
                    for i in items
                    for v in (times[name][i] if pick is None else [pick(times[name][i])])
                ]
                p95[name] = common.percentile(values, 95)
            out[which][stat] = {
                "p95_ms_off": round(p95["off"], 3),
                "p95_ms_on": round(p95["on"], 3),
                "ratio": round(p95["on"] / p95["off"], 4),
            }
        total = {n: sum(sum(times[n][i]) for i in items) for n in ("off", "on")}
        out[which]["total_ratio"] = round(total["on"] / total["off"], 4)
    return out


def _plan_cost(chosen: Settings, asked: list[ReviewRequest]) -> dict[str, float]:
    """What fetching on adds to such a review by itself: planning its look-ups (µs)."""
    reports = {id(r): run_stage1(r) for r in asked}
    each = []
    for request_ in asked:
        started = time.perf_counter()
        for _ in range(20):
            plan_for(request_, reports[id(request_)], chosen)
        each.append((time.perf_counter() - started) / 20 * 1e6)
    return {"median": round(median(each), 1), "p95": round(common.percentile(each, 95), 1)}


def future_dates_on_public() -> dict[str, Any]:
    """Right outputs the always-on dated-reference check flags, per public source and half."""
    today = datetime.now(UTC).date()
    out: dict[str, Any] = {"today": today.isoformat()}
    sources = [m.load() for m in (pypi_readmes, cpython_stdlib, humaneval)]
    sources += [halueval.load(f"halueval-{name}") for name in ("qa", "summarization", "dialogue")]
    for loaded in sources:
        counts: dict[str, dict[str, int]] = {}
        for c in loaded.cases:
            if c.label != GOOD:
                continue
            asked = common.build_request(c.request)
            prose = prose_of(asked.output) or _docstrings(asked)
            half = half_of(loaded.benchmark, c.id).value
            tally = counts.setdefault(half, {"outputs": 0, "flagged": 0})
            tally["outputs"] += 1
            tally["flagged"] += bool(future_references(prose, today))
        out[loaded.benchmark] = counts
    return out


def _docstrings(asked: ReviewRequest) -> str:
    return "\n\n".join(stated_texts(asked.output))


@contextmanager
def _prefix(url: str) -> Iterator[tuple[redis.Redis, str]]:
    """A Redis client and a key prefix of this run's own, its keys deleted after."""
    db = redis.Redis.from_url(url)
    prefix = f"bench-refs-{uuid.uuid4().hex[:8]}"
    try:
        yield db, prefix
    finally:
        for key in db.scan_iter(match=prefix + ":*"):
            db.delete(key)
        db.close()


def main() -> None:
    parser = common.command_line(__doc__)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    figures: dict[str, Any] = {
        "status_table": status_rows(),
        "quotes": quote_rows(),
        "cache": cache_and_flight(args.redis_url),
        "host_limits": host_limits(args.redis_url),
        "refusals": refusals(),
        "cite_nothing": cite_nothing_cost(args.rounds),
        "future_dates": future_dates_on_public(),
    }
    common.publish("url_refs", figures)
    rows = [
        [r["answer"], r["outcome"], r["verdict"], r["certainty"], r["decision"], r["requests"]]
        for r in figures["status_table"]
    ]
    print(common.table(["answer", "outcome", "verdict", "certainty", "decision", "requests"], rows))
    for key in ("quotes", "cache", "host_limits", "refusals", "cite_nothing", "future_dates"):
        print(key, figures[key])


if __name__ == "__main__":
    main()
