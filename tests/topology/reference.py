"""What a DAG runtime computes for itself, written here independently of the fleet.

The full ``downstream`` list of every node: each transitive consumer at its shortest
distance (memoised recursion over consumers, not a breadth-first walk), its cost, and
whether it lies on a longest-duration path (longest chains to and from each node, by
recursion). Lists are ordered by hops, then by the shape's node order.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from schemas.topology import DagShape
from workers.local.demo import sample_dag, sample_shape


def demo_shape(dag_id: str = "demo") -> DagShape:
    return sample_shape(dag_id)


def full_lists(shape: DagShape) -> dict[str, list[dict[str, Any]]]:
    kids: dict[str, list[str]] = {n.node_id: [] for n in shape.nodes}
    parents: dict[str, list[str]] = {n.node_id: [] for n in shape.nodes}
    for edge in shape.edges:
        kids[edge.producer].append(edge.consumer)
        parents[edge.consumer].append(edge.producer)
    cost = {n.node_id: n.cost_usd for n in shape.nodes}
    duration = {n.node_id: n.duration_s for n in shape.nodes}
    position = {n.node_id: i for i, n in enumerate(shape.nodes)}

    @cache
    def hops_from(u: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for child in kids[u]:
            out[child] = 1
        for child in kids[u]:
            for v, d in hops_from(child).items():
                out[v] = min(out.get(v, d + 1), d + 1)
        return out

    @cache
    def longest_from(u: str) -> float:
        return duration[u] + max((longest_from(c) for c in kids[u]), default=0.0)

    @cache
    def longest_to(u: str) -> float:
        return duration[u] + max((longest_to(p) for p in parents[u]), default=0.0)

    longest = max(longest_from(u) for u in kids)
    critical = {
        u
        for u in kids
        if longest_to(u) + longest_from(u) - duration[u] >= longest - 1e-9 * max(1.0, longest)
    }
    return {
        u: [
            {"node_id": v, "cost_usd": cost[v], "critical": v in critical, "hops": d}
            for v, d in sorted(hops_from(u).items(), key=lambda item: (item[1], position[item[0]]))
        ]
        for u in kids
    }


def demo_requests(dag_id: str) -> list[dict[str, Any]]:
    """The demo's 14 requests without their hand-written downstream lists."""
    return [{k: v for k, v in node.items() if k != "downstream"} for node in sample_dag(dag_id)]


def random_requests(shape: DagShape) -> list[dict[str, Any]]:
    """One request per node of ``shape``, without downstream: the demo's outputs, skills,
    signals and flags in turn (partial Wall grades and hard rules included), each node's
    own planned cost."""
    templates = demo_requests(shape.dag_id)
    return [
        {**templates[i % len(templates)], "node_id": node.node_id, "node_cost_usd": node.cost_usd}
        for i, node in enumerate(shape.nodes)
    ]
