"""A worker's restore sweep that SIGKILLs itself as it restores its first message.

``python -m tests.integration.dying_sweeper URL OPTIONS_JSON``: our transport's periodic
sweep (``restore_visible``), killed after it took the sweep's mutex and before it
restored or released anything: what a worker killed mid-sweep, or whose Redis died under
the sweep, leaves behind.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from kombu.connection import Connection

from workers.fleet.transport import qos, redis_transport


class DyingQoS(qos.QoS):
    """Our QoS, dying at its first restore."""

    def restore_by_tag(
        self,
        tag: Any,
        client: Any = None,
        leftmost: bool = False,
        *,
        replay: bool = False,
        before: float | None = None,
    ) -> None:
        os.kill(os.getpid(), signal.SIGKILL)


class DyingChannel(redis_transport.Channel):
    """Our channel with that QoS."""

    QoS = DyingQoS


class DyingTransport(redis_transport.Transport):
    """Our transport with that channel."""

    Channel = DyingChannel


def main(url: str, options_json: str) -> None:
    """Sweep once; the first overdue record kills the process (it exits 0 if none)."""
    options = json.loads(options_json)
    with Connection(url, transport=DyingTransport, transport_options=options) as connection:
        connection.default_channel.qos.restore_visible(num=None)


if __name__ == "__main__":
    main(*sys.argv[1:])
