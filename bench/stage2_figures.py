"""What ``bench.stage2_eval`` records per case and per judge call, and the figures from them.

Recall is over defect cases, a false reject is a good case not accepted (as in
``bench/public/report.py``). Three verdicts per case:

- ``stage1``: the decision with Stage 1 alone (no Ceiling ever runs);
- ``stage2``: the Ceiling judge's own verdict on every case that passed the Floor, sent
  with its Stage 1 report: ``reject`` when a Ceiling dimension scores below the accept
  bar or the claims it gave (contradicted, or not in the sources where the policy wants
  them there) bring grounding below it; ``indeterminate`` when no verdict could be read
  (never counted as a catch); the Floor's cases are not sent;
- ``together``: the decision of the pipeline: Stage 1, the router, Stage 2 where the
  router escalates; ``every`` is the decision had the router escalated every case.

A judge call is ``tool``, ``text`` (its verdict read from a tool call or from JSON in the
text), ``unusable`` (no valid verdict after the repair turn: a parse failure), ``error``
(a provider fault) or ``none`` (a judge that calls no model).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench.public.report import fmt, percentile, share, text_table
from schemas.claims import ClaimSupport
from schemas.hops import Stage2Report
from schemas.judging import JudgeTask, JudgeTier, JudgeVerdict, ModelPrice, TokenUsage
from schemas.quality import CEILING_DIMENSIONS
from schemas.result import BiasCheck, CeilingStatus, Decision
from workers.errors import JudgeError, JudgeOutputError
from workers.evaluate.thresholds import ACCEPT_SCORE
from workers.judges.base import Judge

ACCEPT, REJECT, INDETERMINATE, ERROR = "accept", "reject", "indeterminate", "error"
#: The decisions that do not let an output through.
DECLINED = frozenset(d.value for d in Decision if d is not Decision.ACCEPT)


@dataclass(frozen=True)
class Call:
    """One judging task and how its reply was read."""

    tier: JudgeTier
    form: str
    repaired: bool = False
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0


class Recorder:
    """A judge that records every call it passes on (tier, parse form, tokens, cost)."""

    def __init__(self, judge: Judge, price: ModelPrice | None = None) -> None:
        self._judge = judge
        self._price = price
        self.calls: list[Call] = []

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        """The wrapped judge's verdict; a failure is recorded, then raised as it was."""
        try:
            verdict = self._judge.evaluate(task)
        except JudgeOutputError as exc:
            used = TokenUsage(input_tokens=exc.input_tokens, output_tokens=exc.output_tokens)
            cost = self._price.cost(used) if self._price is not None else 0.0
            self.calls.append(Call(task.tier, "unusable", True, used, cost))
            raise
        except JudgeError:
            self.calls.append(Call(task.tier, ERROR))
            raise
        parse = verdict.parse
        form = parse.form.value if parse is not None else "none"
        repaired = parse is not None and parse.repaired
        self.calls.append(Call(task.tier, form, repaired, verdict.usage, verdict.cost_usd))
        return verdict


@dataclass(frozen=True)
class Row:
    """One case's three verdicts, and what its Ceiling call cost."""

    good: bool
    stage1: str
    escalated: bool = False
    stage2: str | None = None
    """None: not sent (the Floor stopped it)."""
    together: str = ERROR
    every: str = ERROR
    ms: float | None = None
    calls: tuple[Call, ...] = ()
    claims: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class Swap:
    """A good output against a defective one of the same item, in both orders."""

    check: BiasCheck | None
    """None when the judge failed before one pair was done."""
    calls: tuple[Call, ...] = ()


def ceiling_verdict(report: Stage2Report) -> str:
    """The Ceiling's own verdict: its dimensions and its claims, Stage 1 left out."""
    if report.stage2.status is CeilingStatus.INDETERMINATE:
        return INDETERMINATE
    scores = [report.quality.get(d).value for d in CEILING_DIMENSIONS]
    if any(s is None for s in scores):
        return INDETERMINATE
    claims_gate = 1.0 - sum(c.penalty for c in report.stage2.claims if c.definite)
    lowest = min([s for s in scores if s is not None] + [claims_gate])
    return ACCEPT if lowest >= ACCEPT_SCORE else REJECT


def claim_counts(report: Stage2Report) -> Counter[str]:
    """The claims a verdict gave, by the support the review applied; unfound spans apart."""
    counts: Counter[str] = Counter()
    for claim in report.stage2.claims:
        counts[claim.effective.value] += 1
        if claim.span and not claim.span_found:
            counts["span_not_found"] += 1
        if claim.support is ClaimSupport.SUPPORTED and not claim.span_found:
            counts["supported_without_span"] += 1
    return counts


def _catch(rows: list[Row], column: str, rejecting: frozenset[str]) -> dict[str, float | None]:
    """Recall and false-reject rate of one column; an error is no catch, and no accept."""
    bad = [getattr(r, column) for r in rows if not r.good]
    good = [getattr(r, column) for r in rows if r.good]
    return {
        "recall": share(sum(1 for v in bad if v in rejecting), len(bad)),
        "false_reject": share(sum(1 for v in good if v in rejecting or v == ERROR), len(good)),
    }


def _calls(calls: list[Call]) -> dict[str, Any]:
    forms = Counter(c.form for c in calls)
    usage = sum((c.usage for c in calls), TokenUsage())
    return {
        "calls": len(calls),
        "forms": dict(sorted(forms.items())),
        "repaired": sum(1 for c in calls if c.repaired and c.form != "unusable"),
        "parse_failures": forms["unusable"],
        "errors": forms[ERROR],
        "input_tokens": usage.input_tokens + usage.cache_read_input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": round(sum(c.cost_usd for c in calls), 6),
    }


def summarise(rows: list[Row], swaps: list[Swap]) -> dict[str, Any]:
    """The figures of one source (or of all): each column, the calls, the swaps."""
    sent = [r for r in rows if r.stage2 is not None]
    ceiling_calls = [c for r in rows for c in r.calls]
    routed = [c for r in rows if r.escalated for c in r.calls]
    claims: Counter[str] = sum((r.claims for r in rows), Counter())
    stage2 = {
        "sent": len(sent),
        **_catch(sent, "stage2", frozenset({REJECT})),
        "indeterminate": sum(1 for r in sent if r.stage2 == INDETERMINATE),
        **_calls(ceiling_calls),
        "p50_ms": percentile([r.ms for r in sent if r.ms is not None], 50, digits=1),
        "p95_ms": percentile([r.ms for r in sent if r.ms is not None], 95, digits=1),
        "claims": dict(sorted(claims.items())),
    }
    checks = [s.check for s in swaps if s.check is not None]
    return {
        "n": len(rows),
        "good": sum(1 for r in rows if r.good),
        "defects": sum(1 for r in rows if not r.good),
        "errors": sum(1 for r in rows if r.stage1 == ERROR),
        "stage1": _catch(rows, "stage1", DECLINED),
        "stage2": stage2,
        "together": {
            "escalated": sum(1 for r in rows if r.escalated),
            **_catch(rows, "together", DECLINED),
            "cost_usd": round(sum(c.cost_usd for c in routed), 6),
        },
        "every": {**_catch(rows, "every", DECLINED), "cost_usd": stage2["cost_usd"]},
        "swap": {
            "pairs": len(swaps),
            "judged": len(checks),
            "mean_disagreement": round(statistics.fmean(c.disagreement for c in checks), 4)
            if checks
            else None,
            "flagged": sum(1 for c in checks if c.flagged),
            "good_preferred": sum(1 for c in checks if c.preference > 0.5),
            **_calls([c for s in swaps for c in s.calls]),
        },
    }


#: The printed tables' columns: each verdict's recall/false-reject rate, then the calls.
CATCH_HEADERS = ("source", "good/def", "stage1", "stage2", "indet", "together", "esc", "every")
CALL_HEADERS = (
    "source", "calls", "forms", "repaired", "parse fail", "errors", "tokens in/out",
    "cost $", "p50/p95 ms", "swaps", "disagree", "flagged", "swap parse fail",
)  # fmt: skip


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _pair(figures: dict[str, Any]) -> str:
    return f"{fmt(figures['recall'])}/{fmt(figures['false_reject'])}"


def render(results: dict[str, Any]) -> str:
    """Two tables: recall/false rejects per verdict, then what Stage 2's calls did."""
    named = [*results["sources"].items(), ("OVERALL", results["overall"])]
    catch = [
        [
            name,
            f"{f['good']}/{f['defects']}",
            _pair(f["stage1"]),
            _pair(f["stage2"]),
            str(f["stage2"]["indeterminate"]),
            _pair(f["together"]),
            str(f["together"]["escalated"]),
            _pair(f["every"]),
        ]
        for name, f in named
    ]
    calls = [
        [
            name,
            str(s["calls"]),
            " ".join(f"{k}:{v}" for k, v in s["forms"].items()) or "-",
            str(s["repaired"]),
            str(s["parse_failures"]),
            str(s["errors"]),
            f"{s['input_tokens']}/{s['output_tokens']}",
            f"{s['cost_usd']:.4f}",
            f"{_ms(s['p50_ms'])}/{_ms(s['p95_ms'])}",
            f"{w['judged']}/{w['pairs']}",
            fmt(w["mean_disagreement"]),
            str(w["flagged"]),
            str(w["parse_failures"]),
        ]
        for name, f in named
        for s, w in [(f["stage2"], f["swap"])]
    ]
    judge = results["judge"]
    head = judge.get("note") or (
        f"Stage 2: {judge['model']} on {judge['endpoint']} (tool use {judge['tool_use']})"
    )
    return "\n".join(
        [
            head,
            f"test half, {results['budget'] or 'all'} items per source; recall/false-reject rate",
            text_table(CATCH_HEADERS, catch),
            "",
            "Stage 2 calls (Ceiling on every case past the Floor; swap = right vs wrong, both "
            "orders)",
            text_table(CALL_HEADERS, calls),
        ]
    )
