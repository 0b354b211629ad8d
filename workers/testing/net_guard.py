"""What reference tests and the bench fetch through: a scripted resolver and a connect guard.

The guard lets a connection through only to the loopback servers it was given and raises
``ForbiddenConnection`` on any other attempt (a ``BaseException``: no client code catches
it), so nothing can reach an address outside 127.0.0.0/8 and ::1, and a refusal is shown
by the absence of a connection, not by trying one.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from workers.lookups.addresses import IPAddress
from workers.lookups.resolver import NameNotFound, ResolutionFailed
from workers.lookups.transport import connect_tcp

T = TypeVar("T")
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
#: Spellings of the loopback address a URL may use; with ``SCRIPTED_LOOPBACK`` names
#: resolved, each must be refused with no network allowed (issue 36's SSRF list).
LOOPBACK_SPELLINGS = (
    "127.0.0.1",
    "localhost",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "2130706433",
    "0x7f000001",
    "0177.0.0.1",
    "127.1",
    "loopback.invalid",
)
SCRIPTED_LOOPBACK = {"localhost": ["127.0.0.1", "::1"], "loopback.invalid": ["127.0.0.1"]}


class ForbiddenConnection(BaseException):
    """A connection was attempted to an address the guard was not given."""


@dataclass
class ScriptedResolver:
    """Answers names from a table; ``missing`` names are NXDOMAIN, ``failing`` SERVFAIL."""

    answers: Mapping[str, Sequence[str]] = field(default_factory=dict)
    missing: frozenset[str] = frozenset()
    failing: frozenset[str] = frozenset()
    asked: list[str] = field(default_factory=list)

    def __call__(self, host: str, port: int) -> Sequence[IPAddress]:
        """The scripted answer for ``host``."""
        self.asked.append(host)
        if host in self.failing:
            raise ResolutionFailed(f"{host}: SERVFAIL")
        if host in self.answers:
            return [ipaddress.ip_address(a) for a in self.answers[host]]
        raise NameNotFound(f"{host}: no such host")


@dataclass
class ConnectGuard:
    """Connects only to ``allowed`` (address, port) pairs on loopback; raises on any other."""

    allowed: set[tuple[str, int]] = field(default_factory=set)
    attempts: list[tuple[str, int]] = field(default_factory=list)

    def __call__(self, address: IPAddress, port: int, timeout_s: float) -> socket.socket:
        """Connect if ``(address, port)`` was given, else raise ``ForbiddenConnection``."""
        self.attempts.append((str(address), port))
        on_loopback = any(address in net for net in LOOPBACK)
        if not on_loopback or (str(address), port) not in self.allowed:
            raise ForbiddenConnection(f"a connection was attempted to {address}:{port}")
        return connect_tcp(address, port, timeout_s)


def all_at_once(count: int, work: Callable[[int], T]) -> list[T]:
    """``work(0..count-1)`` on as many threads, released together; each one's result."""
    results: dict[int, T] = {}
    start = threading.Barrier(count)

    def run(i: int) -> None:
        start.wait()
        results[i] = work(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return [results[i] for i in range(count)]  # a KeyError names a thread that never ended
