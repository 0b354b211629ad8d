"""Name resolution for fetches: every address of a name, once, before any connection.

The client checks each address the resolver gives and connects to one of those very
addresses, so a name that answers differently a moment later (DNS rebinding) changes
nothing. Tests inject a resolver of their own and never ask a real one.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from typing import Protocol

from workers.lookups.addresses import IPAddress


class NameNotFound(Exception):
    """The name does not exist (NXDOMAIN): a definite answer, once confirmed."""


class ResolutionFailed(Exception):
    """The resolver could not answer (SERVFAIL, a timeout): a transient fault."""


class Resolver(Protocol):
    """Every address ``host`` has; raises ``NameNotFound`` or ``ResolutionFailed``."""

    def __call__(self, host: str, port: int) -> Sequence[IPAddress]:
        """Resolve ``host``."""
        ...


#: ``getaddrinfo``'s codes for a name that does not exist, as against a failed look-up.
_NO_SUCH_NAME = {socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)}


def system_resolver(host: str, port: int) -> Sequence[IPAddress]:
    """The C library's resolver (gevent's, under the gevent pool): A and AAAA answers."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        if exc.errno in _NO_SUCH_NAME:
            raise NameNotFound(f"{host}: no such host") from None
        raise ResolutionFailed(f"{host}: {exc.strerror or exc}") from None
    except (UnicodeError, ValueError) as exc:  # a label too long for IDNA
        raise NameNotFound(f"{host}: not a valid host name ({exc})") from None
    found: list[IPAddress] = []
    for family, _, _, _, sockaddr in infos:
        if family in (socket.AF_INET, socket.AF_INET6):
            address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
            if address not in found:
                found.append(address)
    if not found:
        raise NameNotFound(f"{host}: no address")
    return found
