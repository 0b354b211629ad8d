"""The SDK's HTTP pool under gevent: idle-connection checks that never enter the hub.

httpcore checks every idle pooled connection for a server-side close on each request
and each response close, with a zero-timeout ``select.poll``. Once gevent has patched
``select`` each such poll is a trip through gevent's hub: with a hundred connections in
the pool that scan was a quarter of a Stage 1 worker's CPU (py-spy, ``bench.stage1_io``,
gevent pool, 100 in flight). A zero-timeout poll never blocks, so the unpatched one is
as cooperative and costs one system call.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace


def unpatch_idle_checks() -> bool:
    """Point httpcore's readability check at the unpatched ``select``; True if it was patched."""
    if "gevent" not in sys.modules:
        return False
    from gevent import monkey  # type: ignore[import-untyped]  # gevent ships no hints

    if not monkey.is_module_patched("select"):
        return False
    import select

    import httpcore2._utils

    httpcore2._utils.select = SimpleNamespace(  # type: ignore[attr-defined, assignment]
        poll=monkey.get_original("select", "poll"),
        select=monkey.get_original("select", "select"),
        POLLIN=select.POLLIN,
    )
    return True
