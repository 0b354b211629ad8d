"""Redis databases held by one test run, so that two runs can share one Redis server.

Each test package names a preferred database (``WINDAGS_TEST_REDIS_URL`` and friends:
db 9 for the integration tests, 10 for the fault tests...). Two runs of the suite on one
machine, a second clone or CI beside a developer, would both take db 9 and each empty it
under the other. Here a run holds a database by a lease (``SET NX`` with a TTL, renewed
while the run lives, in database ``LEASE_DB`` of the same server): the preferred database
when no other run holds it, else the first free one of ``CANDIDATES``. A database is
emptied when leased (what a killed run left cannot pass for this run's results) and its
lease dropped when the run ends; a run killed outright lets its leases lapse in
``LEASE_TTL_S``.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from urllib.parse import urlsplit, urlunsplit

import redis

#: Names this run in the leases it holds and in the processes it starts.
RUN_ID = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
#: Where the leases are kept: never emptied by the suite (``scratch_redis`` uses prefixes).
LEASE_DB = 15
#: Databases a run may hold: never 0 (a person's data), never ``LEASE_DB``.
CANDIDATES = tuple(range(1, 15))
LEASE_TTL_S = 120
RENEW_EVERY_S = 30.0

#: Renew (or drop) a lease only while this run holds it: a lapsed one may be another's now.
_IF_MINE = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end "
_RENEW = _IF_MINE + "return redis.call('EXPIRE', KEYS[1], ARGV[2])"
_DROP = _IF_MINE + "return redis.call('DEL', KEYS[1])"


class NoFreeDatabaseError(RuntimeError):
    """Every candidate database of a server is held by other runs."""


def lease_key(database: int) -> str:
    """The key of the lease on ``database`` (in ``LEASE_DB``)."""
    return f"windags-test:lease:{database}"


def _split(url: str) -> tuple[str, int]:
    """A Redis URL's server part and its database number (0 when it names none)."""
    parts = urlsplit(url)
    path = parts.path.strip("/")
    return urlunsplit(parts._replace(path="")), int(path) if path else 0


class Leases:
    """The databases this run holds, per server; a background thread renews them."""

    def __init__(self, run_id: str = RUN_ID) -> None:
        self.run_id = run_id
        self._held: dict[str, str] = {}  # the URL asked for -> the URL of the held database
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def database(self, url: str) -> str:
        """A database of ``url``'s server that this run holds, emptied; the same on each call.

        Raises:
            redis.RedisError: the server does not answer.
            NoFreeDatabaseError: other runs hold every candidate.
        """
        with self._lock:
            if url not in self._held:
                self._held[url] = self._claim(url)
                self._start_renewing()
            return self._held[url]

    def _claim(self, url: str) -> str:
        server, preferred = _split(url)
        mine = {_split(held)[1] for held in self._held.values() if _split(held)[0] == server}
        leases = redis.Redis.from_url(f"{server}/{LEASE_DB}", socket_timeout=5)
        try:
            for database in dict.fromkeys((preferred, *CANDIDATES)):
                if database in mine or database in (0, LEASE_DB):
                    continue
                if leases.set(lease_key(database), self.run_id, nx=True, ex=LEASE_TTL_S):
                    held = f"{server}/{database}"
                    with redis.Redis.from_url(held, socket_timeout=5) as client:
                        client.flushdb()
                    return held
        finally:
            leases.close()
        raise NoFreeDatabaseError(f"other test runs hold every database of {server}")

    def _start_renewing(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._renew, name="redis-leases", daemon=True)
            self._thread.start()

    def _renew(self) -> None:
        while not self._stop.wait(RENEW_EVERY_S):
            self._each_lease(_RENEW, LEASE_TTL_S)

    def _each_lease(self, script: str, *args: object) -> None:
        with self._lock:
            held = list(self._held.values())
        for url in held:
            server, database = _split(url)
            try:
                with redis.Redis.from_url(f"{server}/{LEASE_DB}", socket_timeout=5) as leases:
                    leases.eval(script, 1, lease_key(database), self.run_id, *args)
            except redis.RedisError:
                continue  # a Redis restarted by a fault test; the next round renews

    def release(self) -> None:
        """Drop every lease this run holds (its databases stay as the run left them)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._each_lease(_DROP)
        with self._lock:
            self._held.clear()


#: The run's leases: one per process, released when the session ends (tests/conftest.py).
LEASES = Leases()
