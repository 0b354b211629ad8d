"""Cleanup that a Ctrl-C cannot cut short.

A second Ctrl-C (or a first one that lands while a fleet is already stopping) used to
interrupt the stop itself: workers half stopped, the private Redis left running, the
fleet's log folder left in the temp directory. ``interrupts_deferred`` holds SIGINT and
SIGTERM for the length of a block and raises ``KeyboardInterrupt`` once it is done.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

#: The signals a person or a supervisor stops a command with.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def interrupts_deferred() -> Iterator[list[int]]:
    """Hold Ctrl-C and SIGTERM until the block ends; then raise ``KeyboardInterrupt``.

    Yields the signals held so far. A signal the process ignores stays ignored (``nohup``
    and some CI runners start commands with SIGINT ignored). Signals are only handled in
    the main thread: elsewhere the block runs as is.
    """
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)

    previous = {}
    for sig in STOP_SIGNALS:
        if signal.getsignal(sig) not in (signal.SIG_IGN, None):
            previous[sig] = signal.signal(sig, hold)
    try:
        yield held
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if held:
        raise KeyboardInterrupt
