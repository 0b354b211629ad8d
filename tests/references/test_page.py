"""The review page shows each reference's status chain, and hostile URLs only as text."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from schemas.human import HumanReason, ReviewItem, VerdictAction
from schemas.quality import Dimension
from schemas.references import FetchHop, FetchOutcome, ReferenceCheck, ReferenceVerdict
from tests.evaluate.builders import request
from tests.test_review_page_render import Tags
from workers.human.web.app import Page
from workers.human.web.render import render_output
from workers.review import Reviewer
from workers.settings import Settings

HOSTILE_URL = 'https://x.invalid/"><script>alert(1)</script><a href="javascript:alert(2)">'


def rendered(checks: tuple[ReferenceCheck, ...]) -> str:
    asked = request()
    result = Reviewer(Settings(judge_backend="builtin", package_index_url=""))(asked)
    stage1 = result.stage1.model_copy(update={"references": checks})
    item = ReviewItem(
        review_key="dag-1:node-1:1",
        reasons=(HumanReason.DISAGREEMENT,),
        enqueued_at="2026-12-06T12:00:00Z",
        request=asked,
        result=result.model_copy(update={"stage1": stage1}),
    )
    page = Page(None, None, None)  # type: ignore[arg-type]  # only the templates are used
    context: dict[str, Any] = {
        "reviewer": "ann",
        "item": item,
        "output": render_output(asked.output),
        "claim": SimpleNamespace(ttl_s=60, holder="ann"),
        "mine": True,
        "decided": None,
        "dimensions": list(Dimension),
        "actions": list(VerdictAction),
        "csrf": "token",
    }
    return page.templates.get_template("item.html").render(**context)


def test_each_reference_shows_its_verdict_and_status_chain_with_addresses() -> None:
    check = ReferenceCheck(
        url="https://docs.example.invalid/moved",
        label="[3]",
        verdict=ReferenceVerdict.DEAD,
        outcome=FetchOutcome.NOT_FOUND,
        chain=(
            FetchHop(url="https://docs.example.invalid/moved", address="192.0.2.7", status=301),
            FetchHop(url="https://docs.example.invalid/new", address="192.0.2.7", status=404),
        ),
        detail="HTTP 404 after 1 redirect(s)",
        fetched_at=datetime(2026, 12, 6, 12, 0, tzinfo=UTC),
        content_sha256="ab" * 32,
    )
    tags = Tags()
    tags.feed(rendered((check,)))
    assert "[3]" in tags.text and "https://docs.example.invalid/moved" in tags.text
    assert "dead (not_found)" in tags.text
    assert "301 192.0.2.7 → 404 192.0.2.7" in " ".join(tags.text.split())
    assert "sha256 abababababab" in tags.text


def test_a_hostile_url_and_quote_are_shown_as_text_and_never_linked() -> None:
    check = ReferenceCheck(
        url=HOSTILE_URL,
        verdict=ReferenceVerdict.SUSPECT,
        outcome=FetchOutcome.FORBIDDEN,
        detail="<img src=x onerror=alert(3)>",
    )
    html = rendered((check,))
    tags = Tags()
    tags.feed(html)
    assert {"script", "img"}.isdisjoint(name for name, _ in tags.seen)
    assert not [v for _, attrs in tags.seen for _, v in attrs if v and "javascript:" in v]
    assert HOSTILE_URL in tags.text and "onerror=alert(3)" in tags.text
