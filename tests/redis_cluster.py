"""A local Redis Cluster of three primaries, for the state-on-a-cluster tests.

Three ``redis-server --cluster-enabled yes`` processes on free ports, in a temporary folder
and sessions of their own, joined by ``redis-cli --cluster create``; ready once every node
says ``cluster_state:ok``. ``local_cluster`` stops all three and removes the folder.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import redis

from tests.infrastructure import require_redis_server, unavailable, wait_until
from workers.local.redis_server import free_port
from workers.local.scratch import scratch_folder
from workers.local.tether import tethered

HOST = "127.0.0.1"
PRIMARIES = 3
#: A node's cluster bus listens on its port + 10000, which must be a port too.
BUS_OFFSET = 10_000
MAX_PORT = 65_535


@dataclass
class LocalCluster:
    """The cluster's processes and the URL the fleet's state connections use."""

    directory: Path
    ports: list[int] = field(default_factory=list)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        """``cluster://127.0.0.1:P1;cluster://127.0.0.1:P2;...`` (``workers/redis_urls.py``)."""
        return ";".join(f"cluster://{HOST}:{port}" for port in self.ports)

    def node(self, port: int) -> redis.Redis:
        """A client of one node alone (not cluster-aware), with short timeouts."""
        return redis.Redis(HOST, port, socket_timeout=2, socket_connect_timeout=2)

    def is_ok(self) -> bool:
        """Whether every node says ``cluster_state:ok``."""
        for port in self.ports:
            client = self.node(port)
            try:
                if client.cluster("INFO").get("cluster_state") != "ok":
                    return False
            except (redis.RedisError, OSError):
                return False
            finally:
                client.close()
        return True

    def stop(self) -> None:
        """SIGTERM every node, a bounded wait, then SIGKILL."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


@contextmanager
def local_cluster() -> Iterator[LocalCluster]:
    """Three primaries, slots assigned, ``cluster_state:ok``; reaped and removed after."""
    require_redis_server()
    cli = shutil.which("redis-cli")
    if cli is None:
        unavailable("redis-cli is not on PATH")
        raise AssertionError("unreachable")  # unavailable raises
    cluster = LocalCluster(scratch_folder("cluster"))
    try:
        for _ in range(PRIMARIES):
            port = _cluster_port()
            folder = cluster.directory / str(port)
            folder.mkdir()
            cluster.ports.append(port)
            cluster.processes.append(
                tethered(
                    [
                        *("redis-server", "--port", str(port), "--bind", HOST, "--save", ""),
                        *("--appendonly", "no", "--dir", str(folder), "--cluster-enabled", "yes"),
                        *("--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000"),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        for port in cluster.ports:
            if not wait_until(partial(_answers, cluster, port), timeout_s=10, every_s=0.1):
                raise AssertionError(f"cluster node {port} did not start")
        _create(cli, cluster.ports)
        if not wait_until(cluster.is_ok, timeout_s=30, every_s=0.2):
            raise AssertionError("the local cluster never reached cluster_state:ok")
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(cluster.directory, ignore_errors=True)


def _cluster_port() -> int:
    """A free port whose cluster bus port (+10000) is a free port too."""
    while True:
        port = free_port()
        if port + BUS_OFFSET <= MAX_PORT and _free(port + BUS_OFFSET):
            return port


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def _create(cli: str, ports: list[int]) -> None:
    """Assign the slots; a node still loading its config refuses once, so three tries."""
    output = ""
    for _ in range(3):
        created = subprocess.run(
            [
                *(cli, "--cluster", "create", *(f"{HOST}:{p}" for p in ports)),
                *("--cluster-replicas", "0", "--cluster-yes"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if created.returncode == 0:
            return
        output = (created.stdout + created.stderr)[-2000:]
        time.sleep(0.5)
    raise AssertionError(f"redis-cli --cluster create failed: {output}")


def _answers(cluster: LocalCluster, port: int) -> bool:
    return _pings(cluster.node(port))


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()
