"""The soak's fixed mix: what one DAG of the steady load asks the fleet to review.

Each DAG has ``DAG_NODES`` reviews in a fixed proportion: accepted, sent back to iterate
(a Floor failure), escalated to Stage 2 (a final deliverable, by the hard rule) and
escalated to a person (conflicting signals). Every output carries a line naming its
review, so no two reviews share a content hash (the judge and Ceiling caches fill as they
would on real traffic). Every ``MALFORMED_EVERY``-th DAG also pushes one raw message that
no worker can decode onto a queue list, as a broken producer would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

from workers.fleet.queues import Queue


class Kind(StrEnum):
    """What a review of the mix is expected to end as (its ``decision``, or Stage 2)."""

    ACCEPTED = "accepted"
    ITERATED = "iterated"
    STAGE2 = "stage2"
    HUMAN = "human"


#: The shipped sample behind each kind, and the decision it ends with.
SAMPLES: dict[Kind, tuple[str, ...]] = {
    Kind.ACCEPTED: ("good_python", "example2_no_escalation"),
    Kind.ITERATED: ("floor_failure_python",),
    Kind.STAGE2: ("final_deliverable",),
    Kind.HUMAN: ("example3_conflicting_signals",),
}
#: Reviews of each kind in one DAG: 70% accepted, 15% iterated, 10% Stage 2, 5% a person.
PER_DAG: dict[Kind, int] = {Kind.ACCEPTED: 14, Kind.ITERATED: 3, Kind.STAGE2: 2, Kind.HUMAN: 1}
DAG_NODES = sum(PER_DAG.values())
#: One malformed raw message per this many DAGs (one per 200 reviews).
MALFORMED_EVERY = 10


@cache
def _sample(name: str) -> dict[str, Any]:
    text = resources.files("workers.samples").joinpath(f"{name}.json").read_text()
    body: dict[str, Any] = json.loads(text)
    return body


def plan() -> list[Kind]:
    """The kinds of one DAG's nodes, interleaved (the escalations spread over the DAG)."""
    left = dict(PER_DAG)
    order: list[Kind] = []
    while any(left.values()):
        for kind in Kind:
            if left[kind]:
                order.append(kind)
                left[kind] -= 1
    return order


@dataclass(frozen=True, slots=True)
class Review:
    """One request of the mix and what it should end as."""

    key: str
    kind: Kind
    sample: str
    body: dict[str, Any]


def dag_reviews(dag_id: str) -> list[Review]:
    """The reviews of one DAG of the mix, each with unique output."""
    reviews = []
    for i, kind in enumerate(plan()):
        names = SAMPLES[kind]
        name = names[i % len(names)]
        body = dict(_sample(name))
        node = f"n{i:02d}"
        output = dict(body["output"])
        comment = "# " if output["kind"] == "python" else ""
        output["content"] = f"{output['content']}\n{comment}soak review {dag_id}/{node}\n"
        body.update(dag_id=dag_id, node_id=node, attempt=1, output=output)
        reviews.append(Review(f"{dag_id}:{node}:1", kind, name, body))
    return reviews


def malformed(serial: int) -> tuple[Queue, bytes]:
    """The ``serial``-th raw message no worker can decode, and the queue it goes on.

    Each is distinct (the quarantine files them by digest), and the queues take turns.
    """
    queue = list(Queue)[serial % len(Queue)]
    shapes = (
        b"not json at all %d",
        b'{"body": "%d", "headers": "no properties"}',
        b"\xff\xfe binary %d \x00\x01",
    )
    return queue, shapes[serial % len(shapes)] % serial
