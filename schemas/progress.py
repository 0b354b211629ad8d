"""`DagProgress`: a DAG as its operators see it, folded from its results stream.

Every node: its latest attempt, what was decided (by the fleet, or by a person), its
quality dimensions, whether it waits for a person, and what it has spent; and the DAG's
totals against its registered budget. What ``windags-eval dag show --json`` prints.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import AwareDatetime, Field

from schemas.base import NonNegative, Usd, WireModel
from schemas.decisions import Decision, EscalationReason
from schemas.quality import QualityVector
from schemas.topology import DownstreamSource


class NodeState(StrEnum):
    """Where a node stands, from its latest attempt."""

    PENDING = "pending"
    """Registered, not reviewed yet."""
    ACCEPTED = "accepted"
    """Accepted: its output goes downstream."""
    ITERATING = "iterating"
    """Sent back to its agent with feedback."""
    WAITING_FOR_PERSON = "waiting_for_person"
    """In the review queue: no person's verdict yet."""
    REJECTED = "rejected"
    """A person rejected its last allowed attempt: the DAG must stop the node."""
    ERROR = "error"
    """Its latest attempt could not be reviewed (an error entry says why)."""


class NodeProgress(WireModel):
    """One node of a DAG, as of its latest attempt."""

    node_id: str
    """The node."""
    state: NodeState
    """Where it stands."""
    registered: bool
    """Whether the registered shape lists it (else it was only seen on the stream)."""
    critical: bool = False
    """On the registered DAG's critical path."""
    attempt: Annotated[int, Field(ge=1)] | None = None
    """The latest attempt reviewed."""
    attempts: Annotated[int, Field(ge=0)] = 0
    """Attempts reviewed (results and errors)."""
    decision: Decision | None = None
    """The latest attempt's decision: a person's, when one decided."""
    decided_by: str | None = None
    """The reviewer who decided the latest attempt, if a person did."""
    escalated: bool = False
    """Stage 2 ran on the latest attempt."""
    escalation_reason: EscalationReason | None = None
    """Why the router sent it to Stage 2, or ``none``."""
    downstream_waste_usd: Usd | None = None
    """The downstream waste the router priced for the latest attempt."""
    downstream_source: DownstreamSource | None = None
    """Where that downstream came from."""
    quality: QualityVector | None = None
    """The latest attempt's dimensions (a person's scores where they gave some)."""
    node_spend_usd: Usd = 0.0
    """What producing its reviewed attempts cost, as the requests reported."""
    review_spend_usd: Usd = 0.0
    """What reviewing them cost."""
    error: str | None = None
    """The latest attempt's error, when it could not be reviewed."""


class DagTotals(WireModel):
    """The DAG at a glance."""

    nodes: Annotated[int, Field(ge=0)]
    """Nodes shown: the registered ones, and any others seen on the stream."""
    counts: dict[NodeState, int]
    """Nodes per state (every state, zeros included)."""
    escalated: Annotated[int, Field(ge=0)]
    """Nodes whose latest attempt went to Stage 2."""
    node_spend_usd: Usd
    """What the reviewed attempts cost to produce."""
    review_spend_usd: Usd
    """What reviewing them cost."""
    spend_usd: Usd
    """Both together."""
    budget_usd: Usd | None = None
    """The registered budget, if any."""
    over_budget: bool = False
    """Spend is above the budget."""


class DagProgress(WireModel):
    """A DAG's nodes and totals, as of one entry of its results stream."""

    dag_id: str
    """The DAG."""
    dag_version: Annotated[int, Field(ge=1)] | None = None
    """The registered shape's version; null when none is registered."""
    deadline: AwareDatetime | None = None
    """The registered deadline, if any."""
    critical_path_s: NonNegative | None = None
    """The critical path's expected duration, from the registered shape."""
    nodes: tuple[NodeProgress, ...]
    """Registered nodes in the shape's order, then others in the order first seen."""
    totals: DagTotals
    """Counts and spend."""
    last_entry_id: str
    """The newest stream entry folded in (``0-0``: none yet)."""
