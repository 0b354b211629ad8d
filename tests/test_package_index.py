"""The package index adapter against a PEP 691 index on loopback, and its caches.

The index is ``workers/testing/package_index.py``'s server; the fleet-wide cache is a
real Redis (db 15, a prefix of the test's own). No test asks any index but its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from schemas.packages import IndexAnswer
from schemas.result import Decision
from schemas.stages import Certainty, IssueCode
from workers.errors import ConfigurationError
from workers.package_index import PackageIndex, package_check
from workers.review import Reviewer
from workers.settings import Settings, load_settings
from workers.testing.package_index import HANG, IndexServer, index_server

from .evaluate.builders import decode, obj
from .infrastructure import scratch_redis
from .network_guard import loopback_only

NEW = "fresh-project-after-snapshot"
GONE = "never-registered-project-xyz"


@pytest.fixture
def index() -> Iterator[IndexServer]:
    with index_server([NEW], faults={"index-is-failing": 503, "index-hangs": HANG}) as server:
        yield server


def settings(server: IndexServer, **changes: Any) -> Settings:
    values: dict[str, Any] = {"package_index_url": server.url, "package_index_timeout_s": 2.0}
    return Settings(**{**values, **changes})


def test_present_absent_and_a_failing_index_each_get_their_answer(index: IndexServer) -> None:
    client = PackageIndex(settings(index))
    try:
        got = client.lookup([NEW, GONE, "index-is-failing", "index-hangs"])
    finally:
        client.close()
    assert {n: a.answer for n, a in got.items()} == {
        NEW: IndexAnswer.PRESENT,
        GONE: IndexAnswer.ABSENT,
        "index-is-failing": IndexAnswer.UNREACHABLE,
        "index-hangs": IndexAnswer.UNREACHABLE,
    }
    assert (got[NEW].status, got[GONE].status, got["index-is-failing"].status) == (200, 404, 503)
    assert index.accepts[0].startswith("application/vnd.pypi.simple.v1+json")


def test_only_valid_normal_forms_reach_the_index(index: IndexServer) -> None:
    client = PackageIndex(settings(index))
    try:
        got = client.lookup(["../../admin", "Fresh_Project", "a b", "%2e%2e", "x" * 300, NEW])
    finally:
        client.close()
    assert list(got) == [NEW]
    assert list(index.requests) == [NEW]


def test_a_process_cache_asks_once_per_name_and_never_keeps_a_failure(index: IndexServer) -> None:
    client = PackageIndex(settings(index))
    try:
        for _ in range(3):
            client.lookup([NEW, GONE, "index-is-failing"])
    finally:
        client.close()
    assert index.requests == {NEW: 1, GONE: 1, "index-is-failing": 3}


def test_the_fleet_cache_keeps_present_long_absent_short_and_failures_not_at_all(
    index: IndexServer,
) -> None:
    with scratch_redis("pkgindex") as (client, prefix):
        configured = settings(
            index, key_prefix=prefix, package_present_ttl_s=86_400, package_absent_ttl_s=60
        )
        first, second = PackageIndex(configured, client), PackageIndex(configured, client)
        try:
            first.lookup([NEW, GONE, "index-is-failing"])
            again = second.lookup([NEW, GONE, "index-is-failing"])
        finally:
            first.close()
            second.close()
        keys = configured.keys
        present_ttl = client.ttl(keys.package_answer(NEW))
        absent_ttl = client.ttl(keys.package_answer(GONE))
        assert 60 < present_ttl <= 86_400
        assert 0 < absent_ttl <= 60
        assert client.exists(keys.package_answer("index-is-failing")) == 0
        assert json.loads(client.get(keys.package_answer(GONE)) or b"{}")["answer"] == "absent"
    assert index.requests == {NEW: 1, GONE: 1, "index-is-failing": 2}
    assert again[GONE].checked_at < again["index-is-failing"].checked_at


def test_a_spent_budget_leaves_the_rest_unreachable_without_asking(index: IndexServer) -> None:
    client = PackageIndex(settings(index, package_index_timeout_s=1.0, package_index_budget_s=0.5))
    try:
        got = client.lookup(["index-hangs", "zzz-asked-after-the-hang"])
    finally:
        client.close()
    assert {a.answer for a in got.values()} == {IndexAnswer.UNREACHABLE}
    assert "zzz-asked-after-the-hang" not in index.requests


def test_a_redirect_is_not_followed_and_counts_as_unreachable() -> None:
    with index_server(faults={"moved-project": 301}) as server:
        client = PackageIndex(settings(server))
        try:
            got = client.lookup(["moved-project"])
        finally:
            client.close()
    assert got["moved-project"].answer is IndexAnswer.UNREACHABLE


def test_no_index_configured_is_the_snapshot_alone() -> None:
    offline = Settings(package_index_url="")
    assert package_check(offline).live_index is False
    with pytest.raises(ConfigurationError):
        PackageIndex(offline)


def _batch_item(content: str, n: int) -> Any:
    return decode(obj(node_id=f"node-{n}", output={"kind": "markdown", "content": content}))


def test_in_process_review_asks_the_index_once_for_a_batch_and_obeys_its_answers(
    index: IndexServer,
) -> None:
    reviewer = Reviewer(settings(index, package_allowlist=("acme-*",)))
    newer = f"Install it:\n\n`pip install {NEW}`\n\nThen configure the client as usual."
    missing = f"Install it:\n\n`pip install {GONE}`\n\nThen configure the client as usual."
    private = "Install it:\n\n`pip install acme-billing`\n\nThen configure the client as usual."
    results = [reviewer(_batch_item(newer, n)) for n in range(30)]
    assert index.requests[NEW] == 1
    assert all(not _package_issues(r) for r in results)
    (found,) = _package_issues(reviewer(_batch_item(missing, 99)))
    assert (found.code, found.certainty) == (IssueCode.UNKNOWN_PACKAGE, Certainty.DEFINITE)
    assert "HTTP 404" in found.message
    assert _package_issues(reviewer(_batch_item(private, 100))) == []
    assert "acme-billing" not in index.requests


def test_an_unreachable_index_demotes_the_finding_to_suspect() -> None:
    with index_server() as server:
        dead = settings(server)  # its port is closed once the server stops
    reviewer = Reviewer(dead)
    content = f"Install it:\n\n`pip install {GONE}`\n\nThen configure the client as usual."
    result = reviewer(_batch_item(content, 1))
    (found,) = _package_issues(result)
    assert found.certainty is Certainty.SUSPECT
    assert "could not be asked" in found.message
    assert result.decision is Decision.ACCEPT


def _package_issues(result: Any) -> list[Any]:
    codes = {IssueCode.UNKNOWN_PACKAGE, IssueCode.UNKNOWN_IMPORT, IssueCode.UNDECLARED_IMPORT}
    return [i for i in result.stage1.wall.issues if i.code in codes]


def test_the_suites_guard_refuses_the_default_public_index() -> None:
    client = PackageIndex(Settings(package_index_timeout_s=1.0))  # the default: the public index
    try:
        with loopback_only() as attempts:
            got = client.lookup([GONE])
    finally:
        client.close()
    assert got[GONE].answer is IndexAnswer.UNREACHABLE
    assert attempts and "pypi.org" in attempts[0]


def test_the_settings_read_the_index_and_the_allowlist_at_boot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WINDAGS_PACKAGE_INDEX_URL", "http://127.0.0.1:8080/simple")
    monkeypatch.setenv("WINDAGS_PACKAGE_ALLOWLIST", "acme-*, internal_tools")
    read = load_settings()
    assert read.package_index_url == "http://127.0.0.1:8080/simple/"
    assert read.package_allowlist == ("acme-*", "internal_tools")
    assert package_check(read).allows("Internal.Tools")
    monkeypatch.setenv("WINDAGS_PACKAGE_INDEX_URL", "file:///etc/passwd")
    with pytest.raises(ConfigurationError, match="WINDAGS_PACKAGE_INDEX_URL"):
        load_settings()
