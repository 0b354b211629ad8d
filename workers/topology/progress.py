"""A DAG's progress, folded from its results stream: pure, incremental, no Redis.

Feed ``ProgressFold.add`` each stream entry's payload in order (it keeps only what the
view needs: each node's latest attempt, the verdicts and decisions of people, the spend)
and ask ``progress`` for the view at any point, with the registered shape if there is
one. Exactly one result or error per attempt reaches a stream, so spend adds up once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schemas.decisions import Decision
from schemas.human import HumanDecision, HumanVerdict
from schemas.progress import DagProgress, DagTotals, NodeProgress, NodeState
from schemas.result import ReviewError, ReviewResult
from workers.evaluate.verdict.human import needs_human
from workers.topology.graph import Topology

#: What a results stream entry carries.
Entry = ReviewResult | ReviewError | HumanVerdict | HumanDecision

_STATE_OF = {
    Decision.ACCEPT: NodeState.ACCEPTED,
    Decision.ITERATE: NodeState.ITERATING,
    Decision.ESCALATE_HUMAN: NodeState.REJECTED,
}


@dataclass(slots=True)
class _Node:
    latest: int = 0
    attempts: int = 0
    result: ReviewResult | None = None
    error: ReviewError | None = None
    verdicts: dict[int, str] = field(default_factory=dict)
    decisions: dict[int, HumanDecision] = field(default_factory=dict)
    node_spend_usd: float = 0.0
    review_spend_usd: float = 0.0


class ProgressFold:
    """One DAG's stream folded so far; not thread-safe (one reader owns it)."""

    def __init__(self, dag_id: str) -> None:
        self.dag_id = dag_id
        self.last_entry_id = "0-0"
        self._nodes: dict[str, _Node] = {}

    def add(self, entry_id: str, payload: Entry) -> None:
        """Fold in the entry ``entry_id`` (entries must come in stream order)."""
        self.last_entry_id = entry_id
        if payload.node_id is None:
            return
        node = self._nodes.setdefault(payload.node_id, _Node())
        if isinstance(payload, HumanVerdict):
            node.verdicts[payload.attempt] = payload.reviewer
        elif isinstance(payload, HumanDecision):
            node.decisions[payload.attempt] = payload
        elif isinstance(payload, ReviewResult):
            node.attempts += 1
            node.node_spend_usd += payload.envelope.node_cost_usd
            node.review_spend_usd += payload.envelope.review_cost_usd
            if payload.attempt >= node.latest:
                node.latest, node.result, node.error = payload.attempt, payload, None
        else:
            node.attempts += 1
            node.review_spend_usd += payload.cost_usd
            attempt = payload.attempt or node.latest
            if attempt >= node.latest:
                node.latest, node.result, node.error = attempt, None, payload

    def progress(self, topology: Topology | None = None) -> DagProgress:
        """The view now: registered nodes in the shape's order, then the others."""
        order = list(topology.ids) if topology is not None else []
        listed = set(order)
        order += [node_id for node_id in self._nodes if node_id not in listed]
        nodes = tuple(
            _view(node_id, self._nodes.get(node_id), topology, node_id in listed)
            for node_id in order
        )
        shape = topology.shape if topology is not None else None
        return DagProgress(
            dag_id=self.dag_id,
            dag_version=shape.version if shape is not None else None,
            deadline=shape.deadline if shape is not None else None,
            critical_path_s=topology.critical_duration_s if topology is not None else None,
            nodes=nodes,
            totals=_totals(nodes, shape.budget_usd if shape is not None else None),
            last_entry_id=self.last_entry_id,
        )


def _view(
    node_id: str, node: _Node | None, topology: Topology | None, registered: bool
) -> NodeProgress:
    critical = registered and topology is not None and topology.is_critical(node_id)
    if node is None or (node.result is None and node.error is None):
        return NodeProgress(
            node_id=node_id, state=NodeState.PENDING, registered=registered, critical=critical
        )
    base = NodeProgress(
        node_id=node_id,
        state=NodeState.ERROR,
        registered=registered,
        critical=critical,
        attempt=node.latest,
        attempts=node.attempts,
        node_spend_usd=round(node.node_spend_usd, 6),
        review_spend_usd=round(node.review_spend_usd, 6),
    )
    if node.result is None:
        return base.model_copy(update={"error": node.error.message if node.error else None})
    result = node.result
    decided = node.decisions.get(node.latest)
    decision = decided.decision if decided is not None else result.decision
    waiting = needs_human(result) and node.latest not in node.verdicts
    escalation = result.escalation
    return base.model_copy(
        update={
            "state": NodeState.WAITING_FOR_PERSON if waiting else _STATE_OF[decision],
            "decision": decision,
            "decided_by": decided.reviewer if decided is not None else None,
            "escalated": escalation.escalate,
            "escalation_reason": escalation.reason,
            "downstream_waste_usd": escalation.downstream_waste,
            "downstream_source": escalation.downstream_source,
            "quality": decided.quality if decided is not None else result.quality,
        }
    )


def _totals(nodes: tuple[NodeProgress, ...], budget_usd: float | None) -> DagTotals:
    counts = dict.fromkeys(NodeState, 0)
    for node in nodes:
        counts[node.state] += 1
    node_spend = round(sum(n.node_spend_usd for n in nodes), 6)
    review_spend = round(sum(n.review_spend_usd for n in nodes), 6)
    spend = round(node_spend + review_spend, 6)
    return DagTotals(
        nodes=len(nodes),
        counts=counts,
        escalated=sum(n.escalated for n in nodes),
        node_spend_usd=node_spend,
        review_spend_usd=review_spend,
        spend_usd=spend,
        budget_usd=budget_usd,
        over_budget=budget_usd is not None and spend > budget_usd,
    )
