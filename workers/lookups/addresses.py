"""Which addresses a fetch of a URL a model wrote may connect to: the SSRF policy.

Only public unicast addresses, unless the operator allows a network
(``WINDAGS_REFS_ALLOW_NETWORKS``). ``ipaddress``'s flags alone are not enough: on CPython
before 3.11.10 and 3.12.4 ``is_private`` and ``is_global`` are both False for CGNAT
100.64/10 (CVE-2024-4032), so explicit ranges back them up. IPv6 forms that carry an IPv4
address (mapped, NAT64, 6to4, Teredo) are judged by the IPv4 address they lead to.
A host spelled as a number (``2130706433``, ``0x7f000001``, ``0177.0.0.1``, ``127.1``) is
an IPv4 literal, as the C library's resolver and browsers read it, never a name to look up.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Ranges never fetched, whatever ``ipaddress``'s flags say on this interpreter.
BLOCKED: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(cidr)
    for cidr in (
        "0.0.0.0/8",  # "this network", 0.0.0.0 included
        "10.0.0.0/8",
        "100.64.0.0/10",  # CGNAT: routes to internal workloads in clouds
        "127.0.0.0/8",
        "169.254.0.0/16",  # link-local: cloud metadata at 169.254.169.254
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",  # 6to4 relay anycast
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, broadcast included
        "::/128",
        "::1/128",
        "::/96",  # IPv4-compatible, deprecated
        "100::/64",  # discard
        "2001::/23",  # IETF protocol assignments
        "2001:db8::/32",
        "3fff::/20",
        "5f00::/16",  # segment routing
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local, deprecated
        "ff00::/8",  # multicast
    )
)
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_SIX_TO_FOUR = ipaddress.ip_network("2002::/16")
_TEREDO = ipaddress.ip_network("2001::/32")
#: A host made of numbers and dots only: an IPv4 literal in one of its old spellings.
_NUMERIC_HOST = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}\.?$", re.I)


def literal_address(host: str) -> IPAddress | None:
    """The address ``host`` spells, if it is an IP literal in any spelling; else None.

    ``[::1]``'s brackets are already gone (``urlsplit``'s ``hostname``). Decimal, hex,
    octal and shortened IPv4 forms are read as ``inet_aton`` reads them.
    """
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if _NUMERIC_HOST.match(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host.rstrip(".")))
        except OSError:  # a number too large for its place: no address, not a name either
            return ipaddress.IPv4Address("0.0.0.0")
    return None


def embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address leads to: mapped, NAT64, 6to4, Teredo."""
    if address.ipv4_mapped is not None:
        return (address.ipv4_mapped,)
    if any(address in net for net in _NAT64):
        return (ipaddress.IPv4Address(int(address) & 0xFFFFFFFF),)
    if address in _SIX_TO_FOUR and address.sixtofour is not None:
        return (address.sixtofour,)
    if address in _TEREDO and address.teredo is not None:
        return address.teredo  # (server, client)
    return ()


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Refuses every address that is not public unicast, but for the networks allowed."""

    allowed: tuple[IPNetwork, ...] = ()

    def refusal(self, address: IPAddress) -> str | None:
        """Why ``address`` may not be connected to; None when it may."""
        if self._allowed(address):
            return None
        if isinstance(address, ipaddress.IPv6Address):
            inner = embedded_ipv4(address)
            if inner:
                reasons = [r for r in (self.refusal(a) for a in inner) if r is not None]
                return f"{address} leads to {reasons[0]}" if reasons else None
        blocked = next((net for net in BLOCKED if address in net), None)
        if blocked is not None:
            return f"{address} is in {blocked}, a non-public range"
        if not address.is_global or address.is_multicast or address.is_reserved:
            return f"{address} is not a public unicast address"
        return None

    def refusal_of_any(self, addresses: Iterable[IPAddress]) -> str | None:
        """The first refusal among ``addresses``: one non-public answer refuses the name."""
        return next((r for r in (self.refusal(a) for a in addresses) if r is not None), None)

    def _allowed(self, address: IPAddress) -> bool:
        if any(address.version == net.version and address in net for net in self.allowed):
            return True
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            return self._allowed(address.ipv4_mapped)
        return False
