"""The world's answers about an output's references, turned into Wall findings.

Each fetched page is read through the status table (``statuses``): a confirmed 404, 410
or NXDOMAIN is a definite dead reference, an ambiguous answer a suspect one, a refusal or
an unverified URL no finding at all. A live page is searched for each quote the output
attributes to it, folded as the grounding checks fold their sources (``squash``): found,
the quote is supported; missing from an HTML or plain-text page read whole, it is a
definite misquote; missing from a page read in part, or of another type, a suspect one.
The feedback takes dag-quality.md's shape: ``Source [3] https://... returns 404``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from schemas.quality import Dimension
from schemas.references import (
    CitedUrl,
    FetchedPage,
    FetchOutcome,
    LookupAnswers,
    LookupPlan,
    QuoteCheck,
    ReferenceCheck,
    ReferenceVerdict,
)
from schemas.stages import Certainty, IssueCode
from workers.evaluate.findings import Finding, finding
from workers.evaluate.references.statuses import TABLE
from workers.evaluate.wall.grounding.lexicon import squash

_G = Dimension.GROUNDING
DEAD_PENALTY = 0.35
MISQUOTE_PENALTY = 0.3
SUSPECT_PENALTY = 0.1
#: Findings listed per review; an output citing hundreds of dead pages gets the first ones.
MAX_FINDINGS = 12
#: How much of a URL a message shows.
SHOWN = 120


def checked_references(
    plan: LookupPlan, answers: LookupAnswers
) -> tuple[list[Finding], tuple[ReferenceCheck, ...]]:
    """The findings and the per-reference record for a plan and what the lane found."""
    pages = {page.url: page for page in answers.pages}
    findings: list[Finding] = []
    checks: list[ReferenceCheck] = []
    for cited in plan.urls:
        page = pages.get(cited.url) or _not_fetched(cited, FetchOutcome.UNVERIFIED, "no answer")
        check, found = _check(cited, page)
        checks.append(check)
        findings.extend(found)
    for cited in plan.overlong:
        detail = f"longer than a URL the lane fetches; its first {len(cited.url)} characters shown"
        checks.append(_check(cited, _not_fetched(cited, FetchOutcome.UNSUPPORTED, detail))[0])
    for cited in plan.skipped:
        detail = "over the per-review cap of URLs fetched"
        checks.append(_check(cited, _not_fetched(cited, FetchOutcome.UNVERIFIED, detail))[0])
    return findings[:MAX_FINDINGS], tuple(checks)


def _not_fetched(cited: CitedUrl, outcome: FetchOutcome, detail: str) -> FetchedPage:
    return FetchedPage(url=cited.url, outcome=outcome, detail=detail)


def _check(cited: CitedUrl, page: FetchedPage) -> tuple[ReferenceCheck, list[Finding]]:
    row = TABLE[page.outcome]
    certainty = row.certainty
    if row.confirm and not page.confirmed:
        certainty = Certainty.SUSPECT
    verdict = row.verdict
    if certainty is Certainty.SUSPECT:
        verdict = ReferenceVerdict.SUSPECT
    quotes: tuple[QuoteCheck, ...] = tuple(QuoteCheck(quote=q, found=None) for q in cited.quotes)
    found: list[Finding] = []
    if certainty is not None:
        found.append(_unreachable(cited, page, certainty, row.reason))
    elif page.outcome is FetchOutcome.OK and cited.quotes:
        folded = squash(page.text)
        quotes = tuple(QuoteCheck(quote=q, found=on_page(q, folded)) for q in cited.quotes)
        found.extend(_misquotes(cited, page, quotes))
        if found:
            verdict = ReferenceVerdict.MISQUOTED
    check = ReferenceCheck(
        url=cited.url,
        label=cited.label,
        verdict=verdict,
        outcome=page.outcome,
        chain=page.chain,
        detail=page.detail or row.reason,
        fetched_at=page.fetched_at,
        content_sha256=page.content_sha256,
        quotes=quotes,
    )
    return check, found


def on_page(quote: str, folded_page: str) -> bool:
    """Whether the page (folded by ``squash``) holds the quote, its elisions allowed.

    An ellipsis (``...``, ``…``, ``[...]``) leaves words out: the parts around it must
    appear in order. Square brackets mark the quoter's own letters (``[T]he``): they are
    read as if absent, so ``[T]he`` is ``The``.
    """
    parts = [squash(p.replace("[", "").replace("]", "")) for p in _ELISION.split(quote)]
    at = 0
    for part in (p for p in parts if p):
        found = folded_page.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


_ELISION = re.compile(r"\[\s*(?:\.\s*){3}\]|\[\s*…\s*\]|(?:\.\s*){3}|…")


def _source(cited: CitedUrl) -> str:
    shown = cited.url if len(cited.url) <= SHOWN else cited.url[:SHOWN] + "..."
    return f"Source {cited.label} {shown}" if cited.label else f"Source {shown}"


def _answer(page: FetchedPage) -> str:
    statuses = [str(h.status) for h in page.chain if h.status is not None]
    if page.outcome is FetchOutcome.NO_SUCH_HOST:
        return "names a host that does not exist (NXDOMAIN)"
    if page.status is not None and len(statuses) > 1:
        return f"returns {page.status} after redirects ({' -> '.join(statuses)})"
    if page.status is not None:
        return f"returns {page.status}"
    return f"could not be fetched: {page.outcome.value.replace('_', ' ')}"


def _unreachable(cited: CitedUrl, page: FetchedPage, certainty: Certainty, reason: str) -> Finding:
    definite = certainty is Certainty.DEFINITE
    if definite:
        why = "confirmed by a second request"
    elif TABLE[page.outcome].confirm:
        why = "not confirmed by a second request, so only suspect"
    else:
        why = reason
    where = cited.label or cited.url[:SHOWN]
    return finding(
        _G,
        IssueCode.DEAD_REFERENCE if definite else IssueCode.UNREACHABLE_REFERENCE,
        f"{_source(cited)} {_answer(page)} ({why})",
        DEAD_PENALTY if definite else SUSPECT_PENALTY,
        field="references",
        fix=f"Replace {where} with a live source that says this, or drop the claim that cites it"
        if definite
        else f"Check that {where} is reachable and says what is cited",
        certainty=certainty,
    )


def _misquotes(
    cited: CitedUrl, page: FetchedPage, quotes: tuple[QuoteCheck, ...]
) -> Iterator[Finding]:
    certainty = Certainty.DEFINITE if page.complete else Certainty.SUSPECT
    read = "read whole" if page.complete else "read only in part, or not as text"
    for check in quotes:
        if check.found is False:
            yield finding(
                _G,
                IssueCode.MISQUOTED_REFERENCE,
                f"{_source(cited)} does not contain the quotation {check.quote[:120]!r} "
                f"(page {read})",
                MISQUOTE_PENALTY if page.complete else SUSPECT_PENALTY,
                field="quotes",
                fix="Quote the page word for word, or paraphrase without quotation marks",
                certainty=certainty,
            )
