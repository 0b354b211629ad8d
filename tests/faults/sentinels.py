"""A Redis Sentinel group on this machine: a primary, a replica and three Sentinels.

Every process is a local ``redis-server`` on a free port, in a temporary folder (Sentinels
run as ``redis-server sentinel.conf --sentinel``, which rewrites the file it was given),
in a session of its own, and dies with the test run (``workers/local/tether.py``);
``SentinelGroup.close`` stops them all and removes the folder.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import redis

from tests.infrastructure import require_redis_server, wait_until
from workers.local.redis_server import free_port
from workers.local.scratch import scratch_folder
from workers.local.tether import tethered

MASTER = "windags-ha"
#: How long the Sentinels wait for a silent primary before they call it down (ms), and
#: the failover timeout: short, so that a test sees a failover in seconds.
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 5000
HOST = "127.0.0.1"


@dataclass
class Node:
    """One redis-server process (a data node or a Sentinel)."""

    port: int
    process: subprocess.Popen[bytes]

    def client(self) -> redis.Redis:
        """A client of this node alone, with short timeouts."""
        return redis.Redis(HOST, self.port, socket_timeout=2, socket_connect_timeout=2)

    def kill(self) -> None:
        """SIGKILL it, as an OOM kill or a lost host would stop it."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM, a bounded wait, then SIGKILL."""
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGCONT)
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()


@dataclass
class SentinelGroup:
    """The group's processes, and the URL the fleet reaches its primary by."""

    directory: Path
    data: list[Node] = field(default_factory=list)
    sentinels: list[Node] = field(default_factory=list)

    @property
    def url(self) -> str:
        """``sentinel://...;sentinel://...`` of the three Sentinels, database 0."""
        first, *rest = (f"sentinel://{HOST}:{node.port}" for node in self.sentinels)
        return ";".join([f"{first}/0", *rest])

    def primary_port(self) -> int | None:
        """The primary's port as a Sentinel that answers says, or None."""
        for node in self.sentinels:
            try:
                address = node.client().sentinel_get_master_addr_by_name(MASTER)
            except (redis.RedisError, OSError):
                continue
            if isinstance(address, tuple | list):
                return int(address[1])
        return None

    def node_at(self, port: int) -> Node:
        """The data node listening on ``port``."""
        (node,) = [n for n in self.data if n.port == port]
        return node

    def close(self) -> None:
        """Stop every process and remove the folder."""
        for node in [*self.sentinels, *self.data]:
            node.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


def _start(args: list[str], directory: Path, log: str) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    assert binary is not None
    with (directory / log).open("ab") as out:
        return tethered(
            [binary, *args], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _data_node(directory: Path, name: str, replica_of: int | None = None) -> Node:
    port = free_port()
    folder = directory / name
    folder.mkdir()
    args = ["--port", str(port), "--bind", HOST, "--dir", str(folder), "--save", ""]
    args += ["--appendonly", "yes", "--appendfsync", "everysec"]
    args += ["--maxmemory-policy", "noeviction"]
    if replica_of is not None:
        args += ["--replicaof", HOST, str(replica_of)]
    return Node(port, _start(args, directory, f"{name}.log"))


def _sentinel(directory: Path, name: str, primary: int) -> Node:
    port = free_port()
    conf = directory / f"{name}.conf"
    conf.write_text(
        f"port {port}\nbind {HOST}\ndir {directory}\n"
        f"sentinel monitor {MASTER} {HOST} {primary} 2\n"
        f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n"
        f"sentinel failover-timeout {MASTER} {FAILOVER_TIMEOUT_MS}\n"
        f"sentinel parallel-syncs {MASTER} 1\n"
    )
    return Node(port, _start([str(conf), "--sentinel"], directory, f"{name}.log"))


def _answers(node: Node) -> bool:
    try:
        return bool(node.client().ping())
    except (redis.RedisError, OSError):
        return False


def _ready(group: SentinelGroup) -> bool:
    """The replica is in sync and every Sentinel knows the replica and the other two."""
    _, replica = group.data
    try:
        info = replica.client().info("replication")
        if info.get("master_link_status") != "up":
            return False
        for node in group.sentinels:
            state = cast(dict[str, Any], node.client().sentinel_master(MASTER))
            if int(state["num-other-sentinels"]) < 2 or int(state["num-slaves"]) < 1:
                return False
    except (redis.RedisError, OSError, KeyError):
        return False
    return True


@contextmanager
def sentinel_group(timeout_s: float = 60.0) -> Iterator[SentinelGroup]:
    """A primary with one replica, watched by three Sentinels (quorum 2), all ready."""
    require_redis_server()
    group = SentinelGroup(scratch_folder("sentinel"))
    try:
        primary = _data_node(group.directory, "primary")
        group.data.append(primary)
        assert wait_until(lambda: _answers(primary), timeout_s=20, every_s=0.1)
        group.data.append(_data_node(group.directory, "replica", replica_of=primary.port))
        for i in range(3):
            group.sentinels.append(_sentinel(group.directory, f"sentinel{i}", primary.port))
        assert wait_until(lambda: _ready(group), timeout_s=timeout_s, every_s=0.2), (
            "the Sentinel group did not come up"
        )
        yield group
    finally:
        group.close()


def wait_for_new_primary(group: SentinelGroup, old: int, timeout_s: float) -> float | None:
    """Seconds until the Sentinels name a primary other than ``old``; None if none did."""
    started = time.monotonic()
    promoted = wait_until(
        lambda: group.primary_port() not in (None, old), timeout_s=timeout_s, every_s=0.05
    )
    return time.monotonic() - started if promoted else None
