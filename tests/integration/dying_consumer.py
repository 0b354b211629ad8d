"""A kombu consumer that SIGKILLs itself the moment a message reaches Python.

``python -m tests.integration.dying_consumer URL QUEUE TRANSPORT OPTIONS_JSON``: with
``TRANSPORT`` ``ours`` (``workers.fleet.transport.redis_transport``) or ``kombu`` (kombu's own Redis
transport). The kill lands after Redis handed the message over and before kombu's
consumer code runs: the instant a worker killed mid-delivery lives through.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from kombu.connection import Connection
from kombu.entity import Queue as KombuQueue
from kombu.transport import redis as kombu_redis

from workers.fleet.transport import redis_transport


def _die(self: Any, message: Any, queue: str) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class OurDyingTransport(redis_transport.Transport):
    """Our transport, dying at delivery."""

    _deliver = _die


class KombuDyingTransport(kombu_redis.Transport):
    """kombu's transport, dying at delivery."""

    _deliver = _die


def main(url: str, queue: str, which: str, options_json: str) -> None:
    """Consume ``queue`` until the first message kills the process."""
    dying = OurDyingTransport if which == "ours" else KombuDyingTransport
    options = json.loads(options_json)
    with Connection(url, transport=dying, transport_options=options) as connection:
        with connection.Consumer(KombuQueue(queue), accept=["json"]):
            print("consuming", flush=True)
            while True:
                try:
                    connection.drain_events(timeout=1)
                except TimeoutError:
                    continue


if __name__ == "__main__":
    main(*sys.argv[1:])
