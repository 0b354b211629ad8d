"""A labelled case: one review request and the verdict the data set says it deserves.

Serialised as one JSON object per line (``to_line``): the ``expect`` and ``request`` keys
are what ``windags-eval review --jsonl FILE`` reads; ``benchmark``, ``id`` and ``label``
are extra keys it ignores.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from schemas.request import ReviewRequest

#: Longest output the fleet's intake accepts (``Settings.max_output_chars``' default).
MAX_OUTPUT_CHARS = 200_000

#: Whether the request schema carries ``sources`` yet (grounding checks need it).
SOURCES_SUPPORTED = "sources" in ReviewRequest.model_fields

#: What the bench's node cost to produce: with ``DOWNSTREAM`` it sits at the economic margin.
NODE_COST_USD = 0.02
#: Three consumers worth $0.60 in all: the issue's "three downstream nodes worth $0.60".
DOWNSTREAM: tuple[dict[str, Any], ...] = tuple(
    {"node_id": f"consumer-{n}", "cost_usd": 0.2, "critical": False} for n in (1, 2, 3)
)

_UNSAFE = re.compile(r"[^A-Za-z0-9_.:@/\-]")


class Expect(StrEnum):
    """The verdict a case deserves."""

    ACCEPT = "accept"
    """A good output: any decision but accept is a false reject."""
    REJECT = "reject"
    """A defect the Wall (or later) should stop: accept is a miss."""
    FLOOR = "floor"
    """A defect the Floor itself should stop: accept is a miss."""


GOOD = "good"
"""The label of every good case; defects carry their defect class."""


class Case(BaseModel):
    """One labelled review request."""

    model_config = ConfigDict(frozen=True)

    benchmark: str
    """The public data set it comes from."""
    id: str
    """The item id the held-out rule applies to."""
    expect: Expect
    """The verdict it deserves."""
    label: str
    """``good`` or the defect class (the mutation operator, for derived defects)."""
    request: dict[str, Any]
    """The ``ReviewRequest`` JSON."""

    def to_line(self) -> str:
        """The JSONL line ``windags-eval review --jsonl`` reads."""
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False)


@dataclass
class Loaded:
    """What one loader produced, with the counts of what it left out and why."""

    benchmark: str
    cases: list[Case] = field(default_factory=list)
    held_out: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    unavailable: str | None = None
    """Why the whole source could not be built (missing data or schema field)."""

    def skip(self, reason: str, count: int = 1) -> None:
        """Count ``count`` items left out for ``reason``."""
        self.skipped[reason] = self.skipped.get(reason, 0) + count


def node_id(benchmark: str, item_id: str, label: str) -> str:
    """A wire-safe node id naming the item and its label."""
    return _UNSAFE.sub("_", f"{benchmark}/{item_id}/{label}")[-200:]


def make_request(
    *,
    benchmark: str,
    item_id: str,
    label: str,
    kind: str,
    content: str,
    skill: str,
    task: str | None = None,
    contract: dict[str, Any] | None = None,
    sources: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """A request shaped like what a DAG runtime sends for an ordinary inner node.

    A practised skill with a plausible success rate (P(fail) 0.1 on the seed's formula),
    no escalation flags, and three downstream consumers worth $0.60 (``DOWNSTREAM``): the
    waste a bad output causes ($0.36) is capped at 5x the node's $0.02, $0.10. A Stage 2
    review costs at least about $0.0135 at Sonnet's prices (the rubric alone), more for a
    longer output, so on the prior alone (expected waste $0.01) it never pays: the router
    escalates only where Stage 1's evidence raises P(fail) past about 0.14 for a short
    output, what its suspect findings do (``workers/evaluate/escalation/suspicion.py``).
    """
    request: dict[str, Any] = {
        "dag_id": f"public-eval-{benchmark}",
        "node_id": node_id(benchmark, item_id, label),
        "attempt": 1,
        "skill": {"id": skill, "success_rate": 0.9, "stage": "expert", "breaker": "closed"},
        "output": {"kind": kind, "content": content},
        "node_cost_usd": NODE_COST_USD,
        "downstream": [dict(d) for d in DOWNSTREAM],
    }
    if task:
        request["task"] = task[:MAX_OUTPUT_CHARS]
    if contract:
        request["contract"] = contract
    if sources:
        request["sources"] = sources
    return request


def case(benchmark: str, item_id: str, expect: Expect, label: str, request: dict[str, Any]) -> Case:
    """A labelled case (the harness validates the request when it reviews it)."""
    return Case(benchmark=benchmark, id=item_id, expect=expect, label=label, request=request)


def add_good(
    loaded: Loaded,
    item_id: str,
    content: str,
    *,
    kind: str,
    skill: str,
    task: str | None = None,
    min_chars: int = 1,
) -> None:
    """Add a good output (expect accept) to ``loaded``, or count why it was left out.

    Too short to review, or longer than the fleet's intake accepts (which refuses it
    before any review): both are counted in ``loaded.skipped``, never silently dropped.
    """
    if len(content.strip()) < min_chars:
        loaded.skip("nothing to review")
        return
    if len(content) > MAX_OUTPUT_CHARS:
        loaded.skip("longer than the intake limit")
        return
    request = make_request(
        benchmark=loaded.benchmark,
        item_id=item_id,
        label=GOOD,
        kind=kind,
        content=content,
        skill=skill,
        task=task,
    )
    loaded.cases.append(case(loaded.benchmark, item_id, Expect.ACCEPT, GOOD, request))


T = TypeVar("T")


def interleave(streams: Iterable[Iterable[T]]) -> Iterator[T]:
    """One item of each stream in turn, so a small sample still spans every file."""
    live = [iter(s) for s in streams]
    while live:
        for stream in list(live):
            item = next(stream, None)
            if item is None:
                live.remove(stream)
            else:
                yield item
