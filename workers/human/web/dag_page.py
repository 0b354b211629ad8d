"""A DAG's page: every node's state, decision, dimensions and spend, and the totals.

Built from the DAG's results stream (folded incrementally, ``ProgressReader``) and its
registered shape. The page reloads itself every ``REFRESH_S`` seconds with a meta
refresh, which needs no script: the Content-Security-Policy allows none.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from schemas.progress import NodeState
from schemas.quality import Dimension
from workers.results.progress import ProgressReader

if TYPE_CHECKING:
    from workers.human.web.app import Page

#: Seconds between the page's reloads.
REFRESH_S = 5
#: What a DAG id may be (the wire contract's identifier).
DAG_ID = re.compile(r"^[A-Za-z0-9_.:@/\-]{1,200}$")
STATE_WORDS = {
    NodeState.PENDING: "not reviewed yet",
    NodeState.ACCEPTED: "accepted",
    NodeState.ITERATING: "iterating",
    NodeState.WAITING_FOR_PERSON: "waiting for a person",
    NodeState.REJECTED: "rejected by a person",
    NodeState.ERROR: "error",
}


async def dag_view(request: Request, page: Page, reviewer: str) -> Response:
    """Show one DAG's nodes and totals."""
    dag_id = request.path_params["dag_id"]
    if not DAG_ID.match(dag_id):
        return page.message(request, 404, "That is not a DAG id.", reviewer)
    reader: ProgressReader = request.app.state.progress
    progress = await run_in_threadpool(reader.progress, dag_id)
    if not progress.nodes:
        text = f"DAG {dag_id} has no results and no registered shape."
        return page.message(request, 404, text, reviewer)
    return page.html(
        request,
        "dag.html",
        reviewer=reviewer,
        progress=progress,
        totals=progress.totals,
        reviewed=progress.totals.nodes - progress.totals.counts[NodeState.PENDING],
        states=STATE_WORDS,
        waiting=NodeState.WAITING_FOR_PERSON,
        dimensions=list(Dimension),
        refresh_s=REFRESH_S,
    )
