"""Redis addresses: one Redis, or the Sentinels of a primary (``workers/redis_urls.py``).

These tests only parse and configure addresses: every host is under ``.invalid`` (RFC
6761), and a guard fails any test that resolves a name or opens a connection.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import NoReturn

import pytest

from workers.connections import BlockingSentinelPool, redis_client
from workers.fleet.app import celery_config, create_app
from workers.fleet.transport.sentinel import SENTINEL_TRANSPORT, SentinelTransport
from workers.redis_urls import ClusterUrl, SentinelUrl, parse_cluster_url, parse_sentinel_url
from workers.settings import Settings


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail the test on any name look-up or connection: nothing here may reach a network."""

    def refuse(*args: object, **kwargs: object) -> NoReturn:
        pytest.fail(f"a test of addresses touched the network: {args!r:.120}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield


THREE = (
    "sentinel://:s%40cret@sentinel-a.invalid:26380/2;sentinel://sentinel-b.invalid;"
    "sentinel://sentinel-c.invalid:26381"
)


def test_a_sentinel_url_names_every_sentinel_and_the_first_ones_database_and_password() -> None:
    assert parse_sentinel_url(THREE) == SentinelUrl(
        sentinels=(
            ("sentinel-a.invalid", 26380),
            ("sentinel-b.invalid", 26379),
            ("sentinel-c.invalid", 26381),
        ),
        db=2,
        username=None,
        password="s@cret",
    )


@pytest.mark.parametrize(
    "url",
    [
        "sentinel://h.invalid:1;redis://h.invalid:2",
        "sentinel://:1",
        "sentinel://h.invalid:1/zero",
        "sentinel://h.invalid:x",
    ],
)
def test_a_bad_sentinel_url_stops_the_settings(url: str) -> None:
    with pytest.raises(ValueError, match="redis_url"):
        Settings(redis_url=url, redis_sentinel_master="m")


@pytest.mark.parametrize(
    "url",
    [
        "sentinel://:hunter2@h.invalid:x",
        "sentinel://u:hunter2@h.invalid:1/zero",
        "sentinel://:hunter2@:1",
    ],
)
def test_a_bad_sentinel_url_is_reported_without_its_password(url: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_sentinel_url(url)
    assert "hunter2" not in str(refused.value) and "***@" in str(refused.value)


def test_sentinels_need_the_master_name() -> None:
    with pytest.raises(ValueError, match="needs the master name"):
        Settings(redis_url=THREE)
    # One Redis ignores it: a launcher reads the workers' environment at a placeholder URL.
    assert Settings(redis_url="redis://127.0.0.1:6379/0", redis_sentinel_master="m")


def test_state_connections_and_the_broker_go_through_the_sentinels() -> None:
    settings = Settings(redis_url=THREE, redis_sentinel_master="primary-a")
    client = redis_client(settings, max_connections=7)
    pool = client.connection_pool
    assert isinstance(pool, BlockingSentinelPool)
    assert (pool.service_name, pool.max_connections) == ("primary-a", 7)
    assert pool.connection_kwargs["db"] == 2
    assert pool.connection_kwargs["socket_timeout"] == settings.redis_socket_timeout_s
    client.close()
    config = celery_config(settings)
    assert config["broker_transport"] == SENTINEL_TRANSPORT
    assert config["broker_transport_options"]["master_name"] == "primary-a"
    assert config["broker_url"] == THREE


def test_a_broker_connection_keeps_the_fleets_transport_when_it_fails_over() -> None:
    """kombu moves a connection to the next address with the transport its scheme names.

    Every worker that rode out a Sentinel failover then ran kombu's own Sentinel channel: no
    safe take, no quarantine, no reserved sets (issue 22, item 7). Nothing connects here.
    """
    app = create_app(Settings(redis_url=THREE, redis_sentinel_master="primary-a"))
    pool = app.pool  # the producers' connections, as well as the consumer's and control's
    connections = [app.connection_for_read(), app.connection_for_write(), pool.acquire()]
    try:
        for connection in connections:
            for _ in range(3):  # round the three Sentinels' addresses and back to the first
                connection.maybe_switch_next()
                assert connection.transport_cls == SENTINEL_TRANSPORT
                assert type(connection.transport) is SentinelTransport
                # The first address's password and database (the others name none).
                assert (connection.password, connection.virtual_host) == ("s@cret", "2")
        # The restorer hands deliveries back through a clone (``workers/fleet/recovery.py``).
        assert connections[0].clone().transport_cls == SENTINEL_TRANSPORT
    finally:
        connections[2].release()
        pool.force_close_all()
        app.close()


CLUSTER = "cluster://app:s%40cret@node-a.invalid:7000;cluster://node-b.invalid:7001"


def test_a_cluster_url_names_its_nodes_and_the_first_ones_credentials() -> None:
    assert parse_cluster_url(CLUSTER) == ClusterUrl(
        nodes=(("node-a.invalid", 7000), ("node-b.invalid", 7001)),
        username="app",
        password="s@cret",
    )


@pytest.mark.parametrize(
    "url",
    [
        "cluster://h.invalid:1;redis://h.invalid:2",
        "cluster://h.invalid",
        "cluster://h.invalid:1/3",
        "cluster://:hunter2@:1",
    ],
)
def test_a_bad_cluster_url_stops_the_settings_without_its_password(url: str) -> None:
    with pytest.raises(ValueError, match="state_redis_url") as refused:
        Settings(state_redis_url=url)
    assert "hunter2" not in str(refused.value).split("input_value")[0]


def test_the_broker_is_never_a_cluster_and_only_cluster_state_is_tagged() -> None:
    with pytest.raises(ValueError, match="WINDAGS_STATE_REDIS_URL"):
        Settings(redis_url=CLUSTER)
    assert Settings(state_redis_url=CLUSTER).keys.tagged
    assert not Settings(state_redis_url="redis://state.invalid:6379/1").keys.tagged
    assert not Settings().keys.tagged


def test_a_cluster_state_client_is_redis_pys_cluster_and_the_broker_stays_apart() -> None:
    settings = Settings(redis_url="redis://broker.invalid:6379/0", state_redis_url=CLUSTER)
    # Constructing discovers the cluster; a client is not built here (no cluster runs).
    assert settings.state_url == CLUSTER
    assert celery_config(settings)["broker_url"] == "redis://broker.invalid:6379/0"
