"""A Redis for a local fleet: one that answers already, or a throwaway redis-server."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis

from workers.errors import FleetError
from workers.local.scratch import scratch_folder
from workers.local.tether import tethered
from workers.redis_urls import is_sentinel, parse_sentinel_url


def redis_answers(url: str, timeout_s: float = 1.0) -> bool:
    """Whether a Redis answers PING at ``url`` (for ``sentinel://``, one of the Sentinels)."""
    timeouts = {"socket_connect_timeout": timeout_s, "socket_timeout": timeout_s}
    if is_sentinel(url):
        return any(
            _pings(
                redis.Redis(host, port, socket_connect_timeout=timeout_s, socket_timeout=timeout_s)
            )
            for host, port in parse_sentinel_url(url).sentinels
        )
    return _pings(redis.Redis.from_url(url, **timeouts))


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PrivateRedis:
    """A throwaway redis-server on a free port; ``close`` stops it and removes its folder.

    It dies with the process that started it, SIGKILL included (``workers/local/tether.py``),
    and its folder, left behind then, goes at the next start (``workers/local/scratch.py``).
    """

    port: int = field(default_factory=free_port)
    appendonly: bool = False
    directory: Path = field(default_factory=lambda: scratch_folder("redis"))
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Where it listens."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> PrivateRedis:
        """Start it and wait until it answers."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise FleetError("redis-server is not on PATH")
        self.process = tethered(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes" if self.appendonly else "no",
                # A throwaway server on scratch disk dies by kill -9, never by power loss:
                # with "no", each write reaches the OS before its reply, so the AOF holds
                # all that was acknowledged. With everysec an fsync that lags holds writes
                # back for up to 2 s while Redis answers them, and a kill -9 loses them.
                "--appendfsync",
                "no",
                "--dir",
                str(self.directory),
                "--maxmemory-policy",
                "noeviction",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Its own session: a Ctrl-C at the terminal reaches the launcher, which stops
            # the workers first and this server last, not this server under their feet.
            start_new_session=True,
        )
        try:
            _wait_for(
                lambda: redis_answers(self.url, 0.2), 10.0, "private redis-server did not start"
            )
        except BaseException:
            self.stop(kill=True)
            raise
        return self

    def restart(self, *, kill: bool = False, down_s: float = 0.0) -> PrivateRedis:
        """Stop it (SIGKILL when ``kill``), stay down ``down_s``, start it on the same port.

        With ``appendonly`` it comes back with every write it had acknowledged; without,
        empty.
        """
        self.stop(kill=kill)
        time.sleep(down_s)
        return self.start()

    def pause(self) -> None:
        """SIGSTOP it: connections are still accepted (by the kernel), nothing answers."""
        if self.process is not None:
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT it after ``pause``."""
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)

    def stop(self, *, kill: bool = False) -> None:
        """Stop it (SIGKILL when ``kill``, or when SIGTERM has not stopped it in 20 s).

        Its folder stays (``restart`` reads its AOF back): ``close`` removes it.
        """
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a paused server cannot exit
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def close(self) -> None:
        """Stop it for good and remove its folder (a ``windags-redis-*`` in the temp dir)."""
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


def _wait_for(check: Callable[[], bool], timeout_s: float, message: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise FleetError(message)
