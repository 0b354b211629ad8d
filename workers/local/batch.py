"""Batch review of a JSONL file, as users of DeepEval and promptfoo expect.

Each line is a ``ReviewRequest``, or a labelled case ``{"expect": "accept" | "reject" |
"floor", "request": {...}}``. A bad line becomes a typed error line (with the stream's
error code) and the batch goes on. The tally counts decisions, escalations and failures
by code; labelled lines also give recall, the false-reject rate and a confusion table.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from schemas.request import ReviewRequest
from schemas.result import Decision, ErrorCode, ReviewResult
from workers.errors import InvalidRequest
from workers.intake import OversizedRequest, request_from_obj
from workers.settings import Settings


class Outcome(StrEnum):
    """What became of one line, in the terms a label uses."""

    ACCEPT = "accept"
    REJECT = "reject"
    """Not accepted after the Floor passed: sent back, or to a human."""
    FLOOR = "floor"
    """Refused by the Floor."""
    ERROR = "error"
    """Not a reviewable request."""


class Expect(StrEnum):
    """What a labelled line says the review should conclude."""

    ACCEPT = "accept"
    REJECT = "reject"
    FLOOR = "floor"


@dataclass(frozen=True, slots=True)
class LineResult:
    """One reviewed line: its result, or why it could not be reviewed."""

    number: int
    outcome: Outcome
    result: ReviewResult | None = None
    error: InvalidRequest | None = None
    expect: Expect | None = None

    def to_json(self) -> str:
        """The output line: the result, or a typed error naming the field."""
        body: dict[str, Any] = {"line": self.number}
        if self.expect is not None:
            body["expect"] = self.expect.value
        if self.result is not None:
            body["result"] = self.result.model_dump(mode="json", by_alias=True)
        elif self.error is not None:
            body["error"] = error_body(self.error)
        return json.dumps(body)


def error_body(error: InvalidRequest) -> dict[str, Any]:
    """A refused line's error: its code (as on the stream), the first field, and all of them.

    ``errors`` lists every offending field found (an unknown field beside a missing one
    too), the first of them being ``field`` and ``message``.
    """
    code = ErrorCode.OVERSIZED if isinstance(error, OversizedRequest) else ErrorCode.INVALID_REQUEST
    found = [(error.field, error.reason), *error.others]
    return {
        "code": code.value,
        "field": error.field or None,
        "message": error.reason,
        "errors": [{"field": field or None, "message": reason} for field, reason in found],
    }


def review_lines(
    lines: Iterable[bytes], review: Callable[[ReviewRequest], ReviewResult], settings: Settings
) -> Iterator[LineResult]:
    """Review each non-blank line; a line that is not a request is a typed error."""
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        expect: Expect | None = None
        try:
            expect, body = _labelled(raw)
            request = request_from_obj(
                body,
                max_request_bytes=settings.max_request_bytes,
                max_output_chars=settings.max_output_chars,
            )
        except InvalidRequest as exc:
            yield LineResult(number, Outcome.ERROR, error=exc, expect=expect)
            continue
        result = review(request)
        yield LineResult(number, outcome_of(result), result=result, expect=expect)


def outcome_of(result: ReviewResult) -> Outcome:
    """Accept, a Floor refusal, or any other non-acceptance."""
    if result.decision is Decision.ACCEPT:
        return Outcome.ACCEPT
    return Outcome.REJECT if result.stage1.floor.passed else Outcome.FLOOR


def _labelled(raw: bytes) -> tuple[Expect | None, Any]:
    """The line's label (when it has one) and the request body it carries."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InvalidRequest("", f"not JSON: {exc}"[:300]) from None
    if not (isinstance(body, dict) and isinstance(body.get("request"), dict)):
        return None, body
    try:
        return Expect(str(body.get("expect"))), body["request"]
    except ValueError:
        raise InvalidRequest("expect", "must be accept, reject or floor") from None


@dataclass
class Tally:
    """Counts over a batch, for the summary table."""

    decisions: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    escalated: int = 0
    reviewed: int = 0
    errors: int = 0

    def add(self, line: LineResult) -> None:
        """Count one line."""
        if line.expect is not None:
            self.confusion[(line.expect.value, line.outcome.value)] += 1
        if line.result is None:
            self.errors += 1
            return
        self.reviewed += 1
        self.decisions[line.result.decision.value] += 1
        self.escalated += line.result.escalation.escalate
        if line.outcome is not Outcome.ACCEPT:
            self.failures.update(failure_codes(line.result))

    def share(self, expects: tuple[Expect, ...], outcomes: tuple[Outcome, ...]) -> float | None:
        """Of the lines labelled ``expects``, the share that ended in ``outcomes``."""
        total = sum(n for (e, _), n in self.confusion.items() if e in expects)
        hits = sum(n for (e, o), n in self.confusion.items() if e in expects and o in outcomes)
        return hits / total if total else None

    @property
    def recall(self) -> float | None:
        """Defects (labelled reject or floor) that were not accepted."""
        return self.share((Expect.REJECT, Expect.FLOOR), (Outcome.REJECT, Outcome.FLOOR))

    @property
    def false_reject_rate(self) -> float | None:
        """Good outputs (labelled accept) that were not accepted."""
        return self.share((Expect.ACCEPT,), (Outcome.REJECT, Outcome.FLOOR, Outcome.ERROR))


def failure_codes(result: ReviewResult) -> list[str]:
    """The codes behind a non-acceptance: Floor violations, else Wall issues, else the basis."""
    floor = result.stage1.floor
    if not floor.passed:
        return sorted({f"floor:{v.code}" for v in floor.violations})
    codes = sorted({f"wall:{i.code}" for i in result.stage1.wall.issues})
    return codes or [f"basis:{result.basis.dimension}"]
