"""`DagShape`: a DAG as its runtime registers it once, so the fleet can derive its economics.

A runtime knows its DAG at planning time: nodes with their expected cost and duration,
the edges from producer to consumer, and optionally a deadline and a budget. Registered
once, it lets the fleet derive a node's ``downstream`` (every transitive consumer, the
cascade discounted per hop, critical-path membership) when a request omits it.

The shape is validated when it is built: bounded in size, every edge between known
nodes, no node twice, no edge twice, no cycle. Each refusal is a ``DagProblem`` naming
the node or edge, which pydantic keeps as the error's context (``ctx["error"]``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AwareDatetime, Field, model_validator

from schemas.base import Identifier, NonNegative, Usd, WireModel

#: Most nodes one registered DAG may have.
MAX_DAG_NODES = 2000
#: Most edges one registered DAG may have.
MAX_DAG_EDGES = 20_000
#: Most bytes of a DAG shape's JSON text accepted at registration.
MAX_DAG_BYTES = 4_000_000


class DownstreamSource(StrEnum):
    """Where the downstream list an escalation priced came from."""

    REQUEST = "request"
    """The request's own ``downstream`` list (a supplied list always wins)."""
    REGISTERED_DAG = "registered_dag"
    """Derived from the DAG its runtime registered: transitive consumers, per-hop cascade."""
    NONE = "none"
    """Neither: the request sent no list and no registered DAG knows the node."""


class DagProblem(ValueError):
    """Why a shape is not a DAG the fleet can use; ``field`` names the node or edge."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class DuplicateNode(DagProblem):
    """Two nodes share an id."""


class UnknownNode(DagProblem):
    """An edge names a node the shape does not list."""

    def __init__(self, field: str, message: str, node_id: str) -> None:
        super().__init__(field, message)
        self.node_id = node_id


class DuplicateEdge(DagProblem):
    """The same producer -> consumer edge is listed twice."""


class DagCycle(DagProblem):
    """The edges close a loop: the shape is not acyclic."""

    def __init__(self, field: str, message: str, cycle: tuple[str, ...]) -> None:
        super().__init__(field, message)
        self.cycle = cycle


class DagNode(WireModel):
    """One node as planned: what running it costs and how long it takes."""

    node_id: Identifier
    """The node's id, as its review requests name it."""
    cost_usd: Usd
    """Expected cost of running the node: wasted when an output it consumes is bad."""
    duration_s: NonNegative
    """Expected duration; the critical path is the chain with the longest total."""


class DagEdge(WireModel):
    """The consumer reads the producer's output."""

    producer: Identifier
    """The node whose output is consumed."""
    consumer: Identifier
    """The node that consumes it."""


class DagShape(WireModel):
    """A DAG's shape, registered once per version; later versions replace earlier ones."""

    schema_version: Literal[1] = 1
    """The wire model's version; bumped on incompatible changes."""
    dag_id: Identifier
    """The DAG run, as its review requests name it."""
    version: Annotated[int, Field(ge=1, le=2**31 - 1)] = 1
    """The shape's version: a changed shape needs a higher one, and applies to the
    attempts reviewed after it is registered."""
    nodes: tuple[DagNode, ...] = Field(min_length=1, max_length=MAX_DAG_NODES)
    """Every node of the DAG."""
    edges: tuple[DagEdge, ...] = Field(default=(), max_length=MAX_DAG_EDGES)
    """Producer -> consumer edges."""
    budget_usd: Usd | None = None
    """What the DAG may spend, nodes and reviews together; shown against its spend."""
    deadline: AwareDatetime | None = None
    """When the DAG should be done (with a time zone)."""

    @model_validator(mode="after")
    def _is_a_dag(self) -> DagShape:
        ids = [node.node_id for node in self.nodes]
        seen: dict[str, int] = {}
        for index, node_id in enumerate(ids):
            if node_id in seen:
                raise DuplicateNode(
                    f"nodes.{index}.node_id", f"{node_id!r} is also nodes.{seen[node_id]}"
                )
            seen[node_id] = index
        pairs: dict[tuple[str, str], int] = {}
        for index, edge in enumerate(self.edges):
            for end in ("producer", "consumer"):
                node_id = getattr(edge, end)
                if node_id not in seen:
                    message = f"{node_id!r} is not one of the DAG's nodes"
                    raise UnknownNode(f"edges.{index}.{end}", message, node_id)
            pair = (edge.producer, edge.consumer)
            if pair in pairs:
                raise DuplicateEdge(f"edges.{index}", f"{_arrow(pair)} repeats edges.{pairs[pair]}")
            pairs[pair] = index
        order = topological_order(ids, list(pairs))
        if isinstance(order, Cycle):
            # Named by its last-listed edge (the likeliest mistake), which closes the loop.
            ring = order.nodes
            at = max(range(len(ring)), key=lambda i: pairs[(ring[i], ring[(i + 1) % len(ring)])])
            ring = ring[at + 1 :] + ring[: at + 1]
            loop = " -> ".join((*ring, ring[0]))
            field = f"edges.{pairs[(ring[-1], ring[0])]}"
            raise DagCycle(field, f"closes the cycle {loop}", ring)
        return self


class Cycle:
    """A loop found among the edges: each node feeds the next, the last feeds the first."""

    __slots__ = ("nodes",)

    def __init__(self, nodes: tuple[str, ...]) -> None:
        self.nodes = nodes


def topological_order(ids: Sequence[str], edges: Sequence[tuple[str, str]]) -> list[str] | Cycle:
    """``ids`` producers first (Kahn's algorithm, ties in listed order), or a cycle."""
    children: dict[str, list[str]] = {node: [] for node in ids}
    indegree = dict.fromkeys(ids, 0)
    for producer, consumer in edges:
        children[producer].append(consumer)
        indegree[consumer] += 1
    ready = deque(node for node in ids if indegree[node] == 0)
    order: list[str] = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for child in children[node]:
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    if len(order) == len(ids):
        return order
    return Cycle(_a_cycle({n for n in ids if indegree[n] > 0}, children))


def _a_cycle(stuck: set[str], children: dict[str, list[str]]) -> tuple[str, ...]:
    """One cycle among ``stuck``, the nodes Kahn's algorithm never freed.

    Every stuck node has a stuck parent, so walking parents from any of them comes round.
    """
    parent_of: dict[str, str] = {}
    for node in stuck:
        for child in children[node]:
            if child in stuck:
                parent_of.setdefault(child, node)
    walk: list[str] = []
    position: dict[str, int] = {}
    node = min(stuck)
    while node not in position:
        position[node] = len(walk)
        walk.append(node)
        node = parent_of[node]
    return tuple(reversed(walk[position[node] :]))


def _arrow(pair: tuple[str, str]) -> str:
    return f"{pair[0]} -> {pair[1]}"


__all__ = [
    "MAX_DAG_BYTES",
    "MAX_DAG_EDGES",
    "MAX_DAG_NODES",
    "Cycle",
    "DagCycle",
    "DagEdge",
    "DagNode",
    "DagProblem",
    "DagShape",
    "DownstreamSource",
    "DuplicateEdge",
    "DuplicateNode",
    "UnknownNode",
    "topological_order",
]
