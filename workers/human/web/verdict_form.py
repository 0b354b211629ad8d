"""One item on the page: claim it on opening, show it, take the reviewer's verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from schemas.human import VerdictAction, VerdictChannel, VerdictInput
from schemas.quality import Dimension
from workers.human.queue import ClaimStatus
from workers.human.verdicts import RecordStatus
from workers.human.web.render import render_output

if TYPE_CHECKING:
    from workers.human.web.app import Page

_REFUSED = {
    RecordStatus.DECIDED: "Already decided by {other}: your verdict was not recorded.",
    RecordStatus.HELD: "{other} holds this item now: your verdict was not recorded.",
    RecordStatus.MISSING: "This item no longer waits for a review.",
}


async def item_view(request: Request, page: Page, reviewer: str) -> Response:
    """Show one item; opening it claims it, unless another reviewer holds it."""
    key = request.path_params["key"]
    gate = page.gate
    item = await run_in_threadpool(gate.queue.item, key)
    if item is None:
        return page.message(request, 404, f"No review {key} waits here.", reviewer)
    claim = await run_in_threadpool(gate.queue.claim, key, reviewer)
    decided = None
    if claim.status is ClaimStatus.DECIDED:
        decided = await run_in_threadpool(gate.queue.decided, key)
    return page.html(
        request,
        "item.html",
        reviewer=reviewer,
        item=item,
        output=render_output(item.request.output),
        claim=claim,
        mine=claim.status is ClaimStatus.MINE,
        decided=decided,
        dimensions=list(Dimension),
        actions=list(VerdictAction),
    )


async def submit_verdict(request: Request, page: Page, reviewer: str) -> Response:
    """Record the verdict once; refuse a form without the reviewer's CSRF token."""
    key = request.path_params["key"]
    form = await request.form(max_files=0, max_fields=40)
    if not page.auth.csrf_ok(request, str(form.get("csrf", "")), reviewer):
        return page.message(request, 403, "The form expired or came from elsewhere.", reviewer)
    if form.get("release"):
        await run_in_threadpool(page.gate.queue.release, key, reviewer)
        return RedirectResponse("/", status_code=303)
    try:
        given = verdict_of(form)
    except ValueError as exc:
        return page.message(request, 400, f"Not recorded: {exc}", reviewer)
    recorded = await run_in_threadpool(
        page.gate.desk.record, key, given, reviewer=reviewer, channel=VerdictChannel.PAGE
    )
    if recorded.status is RecordStatus.RECORDED:
        return RedirectResponse(f"/review/{page.templates.filters['keypath'](key)}", 303)
    text = _REFUSED[recorded.status].format(other=recorded.other)
    return page.message(request, 409, text, reviewer)


def verdict_of(form: FormData) -> VerdictInput:
    """The form's verdict; blank scores are left out.

    Raises:
        ValueError: an unknown action, a score that is not a number in 0..1, or text
            over its bound.
    """
    scores: dict[Dimension, float] = {}
    for dimension in Dimension:
        raw = str(form.get(f"score_{dimension.value}", "")).strip()
        if raw:
            try:
                scores[dimension] = float(raw)
            except ValueError:
                raise ValueError(f"{dimension.value}: {raw[:20]!r} is not a number") from None
    action = str(form.get("action", ""))
    if action not in set(VerdictAction):
        raise ValueError("choose accept, reject or send back")
    try:
        return VerdictInput(
            action=VerdictAction(action),
            scores=scores,
            feedback=str(form.get("feedback", "")).strip() or None,
            comment=str(form.get("comment", "")).strip() or None,
        )
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ValueError(f"{where}: {first['msg']}") from None
