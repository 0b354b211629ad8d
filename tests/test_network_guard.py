"""The suite's loopback guard (``tests/network_guard.py``) would notice a test that leaves it.

Nothing here leaves the machine: the guard refuses before any packet or DNS query is sent.
"""

from __future__ import annotations

import socket

import pytest

from tests.network_guard import is_loopback, loopback_only


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        (None, True),
        ("10.0.0.1", False),
        ("169.254.169.254", False),
        ("pypi.org", False),
        ("2130706433", False),
    ],
)
def test_what_counts_as_loopback(host: str | None, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_name_beyond_loopback_is_refused_before_it_is_resolved_and_recorded() -> None:
    with loopback_only() as attempts:
        with pytest.raises(socket.gaierror):
            socket.getaddrinfo("index.example.com", 443)
        with pytest.raises(socket.gaierror):
            socket.getaddrinfo("nothing.invalid", 443)  # written never to resolve: not recorded
    assert attempts == ["resolve index.example.com"]


def test_loopback_connections_pass_through() -> None:
    with loopback_only() as attempts, socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5):
            pass
    assert attempts == []


def test_the_wildcard_a_server_binds_to_is_no_look_up() -> None:
    """A metrics server binds ``0.0.0.0``: no query leaves, nothing is recorded."""
    with loopback_only() as attempts:
        assert socket.getaddrinfo("0.0.0.0", 0, type=socket.SOCK_STREAM)
    assert attempts == []
