"""Redis addresses: one Redis, or the Sentinels of a primary (``workers/redis_urls.py``)."""

from __future__ import annotations

import pytest

from workers.connections import BlockingSentinelPool, redis_client
from workers.fleet.app import celery_config
from workers.fleet.sentinel import SENTINEL_TRANSPORT
from workers.redis_urls import SentinelUrl, parse_sentinel_url
from workers.settings import Settings

THREE = "sentinel://:s%40cret@10.0.0.1:26380/2;sentinel://10.0.0.2;sentinel://h3:26381"


def test_a_sentinel_url_names_every_sentinel_and_the_first_ones_database_and_password() -> None:
    assert parse_sentinel_url(THREE) == SentinelUrl(
        sentinels=(("10.0.0.1", 26380), ("10.0.0.2", 26379), ("h3", 26381)),
        db=2,
        username=None,
        password="s@cret",
    )


@pytest.mark.parametrize(
    "url",
    ["sentinel://h:1;redis://h:2", "sentinel://:1", "sentinel://h:1/zero", "sentinel://h:x"],
)
def test_a_bad_sentinel_url_stops_the_settings(url: str) -> None:
    with pytest.raises(ValueError, match="redis_url"):
        Settings(redis_url=url, redis_sentinel_master="m")


@pytest.mark.parametrize(
    "url", ["sentinel://:hunter2@h:x", "sentinel://u:hunter2@h:1/zero", "sentinel://:hunter2@:1"]
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
