"""The Ceiling's per-claim grounding, checked and merged with Stage 1's findings.

A Ceiling judge may list the output's claims with their support in the sources and the
source's words (the span). Nothing it says is taken on trust: a span is looked up in the
sources and in the material of the task, and a claim marked supported whose span is not
there counts as not in the sources. A claim that names what a Stage 1 finding is about
settles that finding, so each claim is scored and reported once: a suspect finding gives
way to the judge's reading of it (cleared when supported by a span that is there, replaced
by the claim's penalty otherwise); a definite one stands, and the claim adds nothing.

Penalties, on the grounding dimension:

- contradicted: ``CONTRADICTED_PENALTY``; definite (it counts at the decision gate) when
  the span that says otherwise is in the sources, suspect when it is not;
- not in the sources, as the judge says: ``NOT_IN_SOURCES_PENALTY`` under an extractive or
  abstractive policy, definite (the node's claims must be its input's); nothing under
  the open policy, where outside knowledge is allowed;
- marked supported with a span that is not in the sources: the same penalty, suspect.

Claims and spans are the judge's text, and may echo a hostile output: what is quoted into
justifications and feedback is one line, stripped of control and format characters, with
tags escaped, cut short and quoted as data.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from schemas.claims import CheckedClaim, ClaimSupport, ClaimVerdict
from schemas.quality import Dimension, DimensionScore, ScoreStatus
from schemas.request import GroundingPolicy, ReviewRequest
from schemas.stages import Certainty, IssueCode, WallIssue
from workers.evaluate.wall.grounding.lexicon import squash
from workers.evaluate.wall.grounding.task_parts import split_task

CONTRADICTED_PENALTY = 0.35
NOT_IN_SOURCES_PENALTY = 0.25
#: Characters of a claim or span quoted into a justification or feedback.
QUOTED_CHARS = 120
#: Letters and digits a span needs before finding it in a source means anything.
MIN_SPAN_CHARS = 4
#: Stage 1 findings no claim settles: a judge failure, and folds of other findings.
UNSETTLED_CODES = frozenset({IssueCode.JUDGE_INDETERMINATE, IssueCode.MORE_UNSUPPORTED})
JUSTIFICATION_CHARS = 1000

_QUOTED = re.compile(r"'((?:[^'\\]|\\.){1,200})'|\"((?:[^\"\\]|\\.){1,200})\"")
_WHERE = re.compile(r" (?:in sentence \d|not found in|occurs? in the|is not in the|\(checked)")
_TAG = re.compile(r"<")


@dataclass(frozen=True, slots=True)
class _Input:
    """The texts a span may be found in, squashed, with the name to report."""

    texts: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, request: ReviewRequest) -> _Input:
        material = split_task(request.task, request.sources).material
        texts = [(s.id, _padded(s.text)) for s in request.sources]
        texts += [("task", _padded(m)) for m in material]
        return cls(tuple(texts))

    def find(self, span: str) -> str | None:
        """The id of the first text holding ``span`` (word for word, folded), or None."""
        needle = squash(span)
        if sum(c.isalnum() for c in needle) < MIN_SPAN_CHARS:
            return None
        for name, text in self.texts:
            if f" {needle} " in text:
                return name
        return None


def check_claims(
    claims: Sequence[ClaimVerdict],
    request: ReviewRequest,
    issues: Sequence[WallIssue],
    policy: GroundingPolicy,
) -> tuple[CheckedClaim, ...]:
    """Each distinct claim once, its span looked up, Stage 1's findings it settles named."""
    given = _Input.of(request)
    settled: set[int] = set()
    seen: set[str] = set()
    checked: list[CheckedClaim] = []
    for claim in claims:
        key = squash(claim.claim)
        if not key or key in seen:
            continue
        seen.add(key)
        source = given.find(claim.span) if claim.span else None
        matched = [
            i
            for i, issue in enumerate(issues)
            if i not in settled and _settleable(issue) and _names(claim.claim, issue)
        ]
        settled.update(matched)
        known = any(issues[i].certainty is Certainty.DEFINITE for i in matched)
        penalty, definite = (0.0, False) if known else _penalty(claim, source, policy)
        checked.append(
            CheckedClaim(
                claim=claim.claim,
                support=claim.support,
                span=claim.span,
                source=source,
                span_found=source is not None,
                settles=tuple(dict.fromkeys(s for i in matched for s in subjects(issues[i])))[:40],
                penalty=penalty,
                definite=definite,
            )
        )
    return tuple(checked)


def _penalty(
    claim: ClaimVerdict, source: str | None, policy: GroundingPolicy
) -> tuple[float, bool]:
    if claim.support is ClaimSupport.CONTRADICTED:
        return CONTRADICTED_PENALTY, source is not None
    if claim.support is ClaimSupport.SUPPORTED and source is not None:
        return 0.0, False
    if policy is GroundingPolicy.OPEN:
        return 0.0, False
    return NOT_IN_SOURCES_PENALTY, claim.support is ClaimSupport.NOT_IN_SOURCES


def merged_grounding(
    stage1: DimensionScore,
    claims: Sequence[CheckedClaim],
    issues: Sequence[WallIssue],
    scope: str,
) -> DimensionScore:
    """Stage 1's grounding with the claims applied: settled suspicions give way to them.

    A dimension Stage 1 did not score is returned as it is.
    """
    if stage1.status is not ScoreStatus.SCORED or stage1.value is None or not claims:
        return stage1
    gate = stage1.gate if stage1.gate is not None else stage1.value
    settled = _settled(issues, claims)
    cleared = sum(issues[i].penalty for i in settled if issues[i].certainty is Certainty.SUSPECT)
    definite = min(1.0, max(0.0, gate - sum(c.penalty for c in claims if c.definite)))
    value = min(definite, max(0.0, stage1.value + cleared - sum(c.penalty for c in claims)))
    notes = [
        f"suspect: {issue.message}" if issue.certainty is Certainty.SUSPECT else issue.message
        for i, issue in enumerate(issues)
        if issue.dimension is Dimension.GROUNDING and (i not in settled or _is_definite(issue))
    ]
    notes += [describe(c) for c in claims if c.penalty > 0]
    supported = sum(1 for c in claims if c.effective is ClaimSupport.SUPPORTED)
    if supported:
        notes.append(f"judge: {supported} claim(s) supported by a span found in the sources")
    if rest := len(claims) - supported - sum(1 for c in claims if c.penalty > 0):
        notes.append(f"judge: {rest} claim(s) already reported above, or allowed by the policy")
    text = "; ".join([scope, *notes])
    return DimensionScore.scored(value, _clip(text, JUSTIFICATION_CHARS), definite=definite)


def merged_issues(
    issues: Sequence[WallIssue], claims: Sequence[CheckedClaim]
) -> tuple[WallIssue, ...]:
    """Stage 1's issues and the claims', each once: definite first, then the claims'."""
    settled = _settled(issues, claims)
    kept = [i for n, i in enumerate(issues) if n not in settled or _is_definite(i)]
    from_claims = [claim_issue(c) for c in claims if c.penalty > 0]
    definite = [i for i in kept if _is_definite(i)]
    suspect = [i for i in kept if not _is_definite(i)]
    return (*definite, *from_claims, *suspect)


def claim_issue(claim: CheckedClaim) -> WallIssue:
    """The feedback entry of a claim that cost grounding: the claim and the span, quoted."""
    said = quoted(claim.claim)
    if claim.support is ClaimSupport.CONTRADICTED:
        where = f"source {quoted(claim.source)}" if claim.source else "a source"
        message = f"the judge found the claim {said} contradicted by {where}"
        if claim.span:
            message += f", which says {quoted(claim.span)}"
        code, fix = IssueCode.CONTRADICTS_INPUT, "State what the sources say, or drop the claim"
    else:
        why = "its quoted span is not in the sources" if claim.span else "no source states it"
        message = f"the judge found the claim {said} not in the sources ({why})"
        code, fix = IssueCode.UNSUPPORTED_CLAIM, "State only what the sources say, or cite them"
    return WallIssue(
        dimension=Dimension.GROUNDING,
        code=code,
        message=message,
        field="claims",
        fix=fix,
        certainty=Certainty.DEFINITE if claim.definite else Certainty.SUSPECT,
        penalty=round(claim.penalty, 4),
    )


def describe(claim: CheckedClaim) -> str:
    """One line for the grounding justification."""
    what = claim.effective.value.replace("_", " ")
    line = f"judge: {what}: {quoted(claim.claim)}"
    if claim.span:
        found = f"in {quoted(claim.source)}" if claim.source else "not in the sources"
        line += f" (span {quoted(claim.span)}, {found})"
    return line


def quoted(text: str | None, limit: int = QUOTED_CHARS) -> str:
    """Untrusted ``text`` as quoted data, at most ``limit`` characters, in double quotes.

    One line, no control or format characters, tags escaped.
    """
    clean = "".join(
        " " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
        for c in (text or "")
        if unicodedata.category(c) != "Cf"
    )
    clean = _TAG.sub("&lt;", " ".join(clean.split()))
    return json.dumps(_clip(clean, limit), ensure_ascii=False)


def subjects(issue: WallIssue) -> tuple[str, ...]:
    """What a finding is about: its field, else the spans its message quotes."""
    if issue.field and issue.field != "claims":
        return (issue.field,)
    head = _WHERE.split(issue.message, maxsplit=1)[0]
    return tuple(a or b for a, b in _QUOTED.findall(head))


def _settled(issues: Sequence[WallIssue], claims: Iterable[CheckedClaim]) -> set[int]:
    named = {squash(s) for c in claims for s in c.settles}
    return {
        i
        for i, issue in enumerate(issues)
        if _settleable(issue) and any(squash(s) in named for s in subjects(issue))
    }


def _settleable(issue: WallIssue) -> bool:
    return issue.code not in UNSETTLED_CODES and bool(subjects(issue))


def _names(claim: str, issue: WallIssue) -> bool:
    """Whether ``claim`` names what ``issue`` is about (whole words, folded)."""
    said = _padded(claim)
    for subject in subjects(issue):
        about = squash(subject)
        if about and (f" {about} " in said or (len(said) > 12 and said in f" {about} ")):
            return True
    return False


def _is_definite(issue: WallIssue) -> bool:
    return issue.certainty is Certainty.DEFINITE


def _padded(text: str) -> str:
    return f" {squash(text)} "


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
