"""Figures from reviewed cases: recall, false rejects, errors, latency, confusion, causes.

"Not accepted" is any decision other than ``accept``. Recall is over defect cases (expect
``reject`` or ``floor``); ``floor_share`` is, among ``floor`` cases, the share the Floor
itself stopped. A false reject is a good case not accepted. An exception anywhere in
building, validating or reviewing a case is an error: counted, never raised; an error on
a defect case counts as not caught and on a good case as not accepted.

With Stage 2 in the picture: a *definite* false reject is a good case sent back or to a
person without Stage 2 (Stage 1 decided alone); a defect is *caught or escalated* when
Stage 1 stopped it or the router sent it to Stage 2; *good escalated* is the share of good
cases the router sent to Stage 2 (what the escalations cost on outputs that were right).
Figures are kept per half (``dev``: looked at and tuned on; ``test``: only reported), and
the gap between the halves says whether what was tuned generalises.

*Reachable within the bound* asks whether the evidence could do better than the router's
economics make it: the most defects caught or escalated by ANY threshold on the router's
P(fail) (Stage 1's evidence, the one thing that differs between these nodes) that escalates
at most ``GOOD_ESCALATED_BOUND`` of the good outputs. Cases with equal P(fail) go together,
as a router cannot tell them apart. Below the target, no prior, cost or waste setting of
the router reaches it on this evidence: only better evidence would.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.public.case import Expect
from bench.public.heldout import Half

ERROR = "error"
#: The share of good outputs issue 21 lets the router send to Stage 2 on HaluEval.
GOOD_ESCALATED_BOUND = 0.35
EXAMPLES = 3
TOP = 5


@dataclass(frozen=True)
class Outcome:
    """What happened to one case."""

    benchmark: str
    id: str
    expect: Expect
    label: str
    decision: str
    """``accept``, ``iterate``, ``escalate_human`` or ``error``."""
    floor_failed: bool
    codes: tuple[str, ...]
    """Floor violation and Wall issue codes (or the exception type, for an error)."""
    ms: float
    peer: tuple[str, bool] | None = None
    escalated: bool = False
    """Whether the router sent it to Stage 2."""
    half: Half = Half.DEV
    """The half of the tunable items it belongs to."""
    p_fail: float | None = None
    """The router's P(fail) (Stage 1's evidence on the node's prior)."""
    policy: str | None = None
    """The grounding policy the Wall applied (null when it checked against no input)."""

    @property
    def accepted(self) -> bool:
        """Whether the engine let it through."""
        return self.decision == "accept"

    @property
    def good(self) -> bool:
        """Whether the case is a good output."""
        return self.expect is Expect.ACCEPT


@dataclass
class _Examples:
    count: int = 0
    ids: list[str] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)

    def add(self, item_id: str, codes: Iterable[str] = ()) -> None:
        self.count += 1
        self.codes.update(set(codes))
        if item_id not in self.ids and len(self.ids) < EXAMPLES:
            self.ids.append(item_id)


def share(part: int, whole: int) -> float | None:
    """``part / whole`` to four places; None when there is no whole."""
    return round(part / whole, 4) if whole else None


def percentile(values: list[float], q: int, digits: int = 2) -> float | None:
    """The ``q``-th percentile (inclusive method), rounded; None for no values."""
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], digits)
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], digits)


def fmt(value: object) -> str:
    """A printed figure: ``-`` for none, three places for a float."""
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Right-aligned columns two spaces apart, a rule under the headers."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    out = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def summarise(outcomes: list[Outcome]) -> dict[str, Any]:
    """The figures of one group of outcomes."""
    good = [o for o in outcomes if o.good]
    bad = [o for o in outcomes if not o.good]
    floor = [o for o in outcomes if o.expect is Expect.FLOOR]
    times = [o.ms for o in outcomes if o.decision != ERROR]
    return {
        "n": len(outcomes),
        "good": len(good),
        "defects": len(bad),
        "recall": share(sum(1 for o in bad if not o.accepted), len(bad)),
        "floor_share": share(sum(1 for o in floor if o.floor_failed), len(floor)),
        "false_reject": share(sum(1 for o in good if not o.accepted), len(good)),
        "definite_false_reject": share(
            sum(1 for o in good if not o.accepted and not o.escalated), len(good)
        ),
        "caught_or_escalated": share(
            sum(1 for o in bad if not o.accepted or o.escalated), len(bad)
        ),
        "good_escalated": share(sum(1 for o in good if o.escalated), len(good)),
        "reachable_within_bound": reachable_within_bound(outcomes),
        "errors": sum(1 for o in outcomes if o.decision == ERROR),
        "p50_ms": percentile(times, 50),
        "p95_ms": percentile(times, 95),
        "confusion": _confusion(outcomes),
        "peers": _peers(outcomes),
    }


def reachable_within_bound(
    outcomes: Sequence[Outcome], bound: float = GOOD_ESCALATED_BOUND
) -> float | None:
    """The most defects caught or escalated by a P(fail) threshold escalating <= ``bound`` good.

    What Stage 1 sent back stays caught; every other case (accepted, or escalated) is the
    router's to send, ranked by its P(fail). None without defects, good outputs or P(fail).
    """
    good = [o for o in outcomes if o.good]
    bad = [o for o in outcomes if not o.good]
    routable = [o for o in outcomes if o.accepted or o.escalated]
    if not good or not bad or any(o.p_fail is None for o in routable):
        return None
    caught = sum(1 for o in bad if not o.accepted and not o.escalated)
    best = caught
    by_p: dict[float, list[Outcome]] = defaultdict(list)
    for o in routable:
        by_p[o.p_fail or 0.0].append(o)
    sent_good = sent_bad = 0
    for p in sorted(by_p, reverse=True):
        sent_good += sum(1 for o in by_p[p] if o.good)
        sent_bad += sum(1 for o in by_p[p] if not o.good)
        if sent_good > bound * len(good):
            break
        best = caught + sent_bad
    return share(best, len(bad))


def _confusion(outcomes: Iterable[Outcome]) -> dict[str, dict[str, int]]:
    """label -> {accepted, floor, other_reject, error}."""
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        if o.decision == ERROR:
            column = "error"
        elif o.accepted:
            column = "accepted"
        else:
            column = "floor" if o.floor_failed else "other_reject"
        table[o.label][column] += 1
    columns = ("accepted", "floor", "other_reject", "error")
    return {label: {c: row[c] for c in columns} for label, row in sorted(table.items())}


def _peers(outcomes: Iterable[Outcome]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        if o.peer is not None:
            groups[o.peer[0]].append(o)
    figures = {}
    for name, members in sorted(groups.items()):
        good = [o for o in members if o.good]
        bad = [o for o in members if not o.good]
        figures[name] = {
            "n": len(members),
            "recall": share(sum(1 for o in bad if o.peer and not o.peer[1]), len(bad)),
            "false_reject": share(sum(1 for o in good if o.peer and not o.peer[1]), len(good)),
        }
    return figures


def causes(outcomes: Iterable[Outcome]) -> dict[str, Any]:
    """The codes behind false rejects and misses, with example ids, most frequent first.

    A false reject is listed under each code it carried. A miss is listed under its
    defect label, with the codes the engine did raise on those cases (warnings that were
    not enough to stop them), if any.
    """
    false_rejects: dict[str, _Examples] = defaultdict(_Examples)
    misses: dict[str, _Examples] = defaultdict(_Examples)
    for o in outcomes:
        if o.good and not o.accepted:
            for code in set(o.codes) or {f"no code ({o.decision})"}:
                false_rejects[code].add(o.id)
        elif not o.good and o.accepted:
            misses[o.label].add(o.id, o.codes)
    return {"false_reject": _top(false_rejects), "miss": _top(misses)}


def _top(found: dict[str, _Examples]) -> list[dict[str, Any]]:
    ranked = sorted(found.items(), key=lambda kv: (-kv[1].count, kv[0]))[:TOP]
    return [
        {"cause": k, "count": v.count, "examples": v.ids, "codes": dict(v.codes.most_common(3))}
        for k, v in ranked
    ]


#: The figures whose dev/test gap is reported.
GAPPED = (
    "recall",
    "false_reject",
    "definite_false_reject",
    "caught_or_escalated",
    "good_escalated",
    "reachable_within_bound",
)


def by_half(outcomes: list[Outcome]) -> dict[str, Any]:
    """Each half's figures and the gap between them (|dev - test| per figure)."""
    halves = {h.value: summarise([o for o in outcomes if o.half is h]) for h in Half}
    dev, test = halves[Half.DEV.value], halves[Half.TEST.value]
    gap = {
        k: round(abs(dev[k] - test[k]), 4)
        for k in GAPPED
        if dev.get(k) is not None and test.get(k) is not None
    }
    return {**halves, "gap": gap}


def agreement(shapes: dict[str, list[Outcome]]) -> dict[str, float | None]:
    """Per half, the share of cases whose decision and escalation agree in every shape."""
    verdicts: dict[tuple[str, str, Half], set[tuple[str, bool]]] = defaultdict(set)
    for outcomes in shapes.values():
        for o in outcomes:
            verdicts[(o.id, o.label, o.half)].add((o.decision, o.escalated))
    return {
        h.value: share(
            sum(1 for (_, _, half), v in verdicts.items() if half is h and len(v) == 1),
            sum(1 for (_, _, half) in verdicts if half is h),
        )
        for h in Half
    }


def agreement_with(
    reference: list[Outcome], other: list[Outcome], *, on: str = "decision"
) -> dict[str, float | None]:
    """Per half, the share of cases ``other`` decides as ``reference`` does.

    ``on="decision"`` compares the decision and the escalation (what a runtime sees);
    ``on="routing"`` what Stage 1 and the router decided, Stage 2's verdict aside (sent
    back, escalated, or accepted); ``on="policy"`` the grounding policy the Wall applied.
    """

    def key(o: Outcome) -> tuple[str, bool] | str | None:
        if on == "decision":
            return (o.decision, o.escalated)
        if on == "routing":
            return "escalated" if o.escalated else o.decision
        return o.policy

    expected = {(o.id, o.label): key(o) for o in reference}
    paired = [(o, expected[(o.id, o.label)]) for o in other if (o.id, o.label) in expected]
    return {
        h.value: share(
            sum(1 for o, want in paired if o.half is h and key(o) == want),
            sum(1 for o, _ in paired if o.half is h),
        )
        for h in Half
    }
