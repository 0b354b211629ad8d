"""No test reaches past loopback: a connection or a name look-up beyond it fails the test.

Installed for every test by ``conftest``: ``socket.socket.connect`` (and ``connect_ex``)
refuse any address outside 127.0.0.0/8 and ::1 (Unix sockets pass), ``getaddrinfo``
refuses any name but ``localhost`` and loopback literals, so not even a DNS query leaves
the machine (the wildcard a server binds to, ``0.0.0.0``, is no look-up and passes). A
refused attempt raises where it happens and is recorded; the fixture fails the test that
made it, even when the code under test caught the error (the package
index client turns a refused connection into "unreachable"). Names under ``.invalid``
are refused without being recorded: they are written never to resolve.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_LOCAL_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


def is_loopback(host: object) -> bool:
    """Whether ``host`` is a loopback address or name (a Unix socket path counts)."""
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip("[]").split("%", 1)[0]
    if name.lower() in _LOCAL_NAMES or name.lower().endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool((mapped or address).is_loopback)


def _is_wildcard(host: object) -> bool:
    """The unspecified address a server binds to (``0.0.0.0``, ``::``): no query, no peer."""
    text = host.decode("ascii", "replace") if isinstance(host, bytes) else host
    return text in ("", "0.0.0.0", "::")


@contextmanager
def loopback_only() -> Iterator[list[str]]:
    """Refuse non-loopback connects and look-ups for the duration; yields the attempts.

    Nests: the functions in place on entry (another guard's) are put back on exit.
    """
    attempts: list[str] = []
    cls = socket.socket  # restored on this class, whatever replaces the name meanwhile
    _connect, _connect_ex = cls.connect, cls.connect_ex
    _getaddrinfo = socket.getaddrinfo

    def refuse(what: str) -> None:
        attempts.append(what)
        raise ConnectionRefusedError(f"tests reach only loopback, not {what}")

    def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
        def connect(self: socket.socket, address: Any) -> Any:
            if self.family in (socket.AF_INET, socket.AF_INET6) and not is_loopback(address[0]):
                refuse(f"{address[0]}:{address[1]}")
            return original(self, address)

        return connect

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_loopback(host) and not _is_wildcard(host):
            text = host.decode() if isinstance(host, bytes) else str(host)
            if not text.rstrip(".").endswith(".invalid"):
                attempts.append(f"resolve {text}")
            raise socket.gaierror(socket.EAI_NONAME, f"tests resolve only loopback, not {text}")
        return _getaddrinfo(host, *args, **kwargs)

    cls.connect = guarded(_connect)  # type: ignore[method-assign]
    cls.connect_ex = guarded(_connect_ex)  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo
    try:
        yield attempts
    finally:
        cls.connect = _connect  # type: ignore[method-assign]
        cls.connect_ex = _connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = _getaddrinfo
