"""Downstream economics derived from a registered DAG: pure, no Redis, no clock.

A node's downstream is every transitive consumer, at its shortest distance in hops (the
likeliest way a bad output reaches it), with its planned cost and whether it lies on
the critical path. The escalation formula discounts each by the cascade probability
once per hop (``workers.evaluate.escalation.formula.cascade_waste``) and caps the sum at 5x the
node's own cost, as for a list the runtime sends.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.request import DownstreamNode, ReviewRequest
from workers.evaluate.escalation.formula import WASTE_CAP_MULTIPLE
from workers.topology.graph import Topology


def frontiers(topology: Topology, node_id: str) -> list[list[int]]:
    """The consumers of ``node_id`` by distance: ``[hop 1, hop 2, ...]``.

    Node indices, each layer in shape order, every node at its shortest distance only.
    """
    start = topology.index[node_id]
    children = topology.children
    seen = bytearray(len(topology.ids))
    seen[start] = 1
    layers: list[list[int]] = []
    frontier = [start]
    while True:
        found = []
        for u in frontier:
            for child in children[u]:
                if not seen[child]:
                    seen[child] = 1
                    found.append(child)
        if not found:
            return layers
        found.sort()
        layers.append(found)
        frontier = found


def consumers(topology: Topology, node_id: str) -> tuple[DownstreamNode, ...]:
    """``node_id``'s downstream as a request carries it: nearest hops first."""
    entry = topology.entry
    return tuple(
        entry(i, hops)
        for hops, layer in enumerate(frontiers(topology, node_id), start=1)
        for i in layer
    )


def with_derived_downstream(
    request: ReviewRequest, topology: Topology | None
) -> tuple[ReviewRequest, int | None]:
    """``request`` with its downstream derived from ``topology``, and that DAG's version.

    A request that sends a list keeps it (it wins); one whose node the DAG does not list,
    or with no DAG registered, is returned as it is, with no version.
    """
    if request.downstream or topology is None or request.node_id not in topology.index:
        return request, None
    derived = consumers(topology, request.node_id)
    return request.model_copy(update={"downstream": derived}), topology.version


@dataclass(frozen=True, slots=True)
class NodeEconomics:
    """One node's derived downstream, as the DAG views and the benches show it."""

    node_id: str
    waste_usd: float
    """The downstream waste the router would price: consumers' costs discounted per hop,
    capped at 5x the node's planned cost."""
    capped: bool
    """The cap bound it (the walk stopped once the discounted costs reached it)."""
    critical: bool
    """The node lies on the critical path."""
    feeds_critical_path: bool
    """A consumer lies on the critical path (the partial-Wall rule reads this)."""


def all_economics(topology: Topology, cascade_probability: float) -> dict[str, NodeEconomics]:
    """Every node's derived downstream waste and criticality, in the shape's order.

    Each walk stops once the discounted costs reach the node's cap: the capped figure is
    what the router prices, and a walk past the cap would change nothing of it.
    """
    critical, children = topology.critical, topology.children
    feeds = [False] * len(topology.ids)
    for u in reversed(topology.order):
        feeds[u] = any(c in critical or feeds[c] for c in children[u])
    out: dict[str, NodeEconomics] = {}
    for i, node_id in enumerate(topology.ids):
        cap = WASTE_CAP_MULTIPLE * topology.cost[i]
        waste = _capped_waste(topology, i, cascade_probability, cap)
        out[node_id] = NodeEconomics(
            node_id=node_id,
            waste_usd=min(waste, cap),
            capped=waste >= cap,
            critical=i in critical,
            feeds_critical_path=feeds[i],
        )
    return out


def _capped_waste(topology: Topology, start: int, cascade: float, cap: float) -> float:
    """``cascade_waste`` of ``start``'s consumers, hop by hop, stopping at ``cap``.

    The same arithmetic as ``cascade_waste`` (each hop's costs summed in shape order,
    then times ``cascade ** hops``), so the figures agree to the last bit.
    """
    children, cost_of = topology.children, topology.cost.__getitem__
    seen = bytearray(len(topology.ids))
    seen[start] = 1
    frontier, total, hops = [start], 0.0, 0
    while total < cap:
        found: list[int] = []
        add = found.append
        for u in frontier:
            for child in children[u]:
                if not seen[child]:
                    seen[child] = 1
                    add(child)
        if not found:
            break
        hops += 1
        found.sort()
        total += sum(map(cost_of, found)) * cascade**hops
        frontier = found
    return total
