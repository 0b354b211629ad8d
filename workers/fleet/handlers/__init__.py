"""What each queue's task does, without Celery: stage1 [-> refs] -> router [-> stage2] -> stream.

A handler returns the next hop (or nothing) instead of enqueueing it, so the Celery
tasks stay thin adapters and tests drive handlers with real Redis and a scripted judge,
no broker needed.
"""

from workers.fleet.handlers.malformed import handle_malformed
from workers.fleet.handlers.refs import handle_refs
from workers.fleet.handlers.router import handle_router
from workers.fleet.handlers.stage1 import handle_stage1
from workers.fleet.handlers.stage2 import handle_stage2

__all__ = ["handle_malformed", "handle_refs", "handle_router", "handle_stage1", "handle_stage2"]
