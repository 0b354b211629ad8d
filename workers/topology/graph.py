"""A registered DAG indexed for derivation.

Consumers by index, a topological order, and critical-path membership by the longest
expected duration.
"""

from __future__ import annotations

from schemas.request import DownstreamNode
from schemas.topology import DagShape, topological_order

#: Relative slack within which two paths' expected durations count as equally long.
CRITICAL_TOLERANCE = 1e-9


class Topology:
    """One version of a registered DAG, indexed once and read by every request of it.

    Nodes are numbered in the shape's order; ``children[i]`` are node ``i``'s direct
    consumers. Immutable after construction, so threads and greenlets share it freely.
    """

    __slots__ = (
        "_entries",
        "children",
        "cost",
        "critical",
        "critical_duration_s",
        "ids",
        "index",
        "order",
        "shape",
    )

    def __init__(self, shape: DagShape) -> None:
        self.shape = shape
        self.ids: tuple[str, ...] = tuple(node.node_id for node in shape.nodes)
        self.index: dict[str, int] = {node_id: i for i, node_id in enumerate(self.ids)}
        children: list[list[int]] = [[] for _ in self.ids]
        for edge in shape.edges:
            children[self.index[edge.producer]].append(self.index[edge.consumer])
        self.children: tuple[tuple[int, ...], ...] = tuple(tuple(c) for c in children)
        self.cost: tuple[float, ...] = tuple(node.cost_usd for node in shape.nodes)
        order = topological_order(self.ids, [(e.producer, e.consumer) for e in shape.edges])
        if not isinstance(order, list):  # a DagShape is acyclic by construction
            raise ValueError(f"{shape.dag_id} is not acyclic")
        self.order: tuple[int, ...] = tuple(self.index[node_id] for node_id in order)
        durations = [node.duration_s for node in shape.nodes]
        self.critical, self.critical_duration_s = _critical_path(
            self.order, self.children, durations
        )
        self._entries: dict[tuple[int, int], DownstreamNode] = {}

    def entry(self, index: int, hops: int) -> DownstreamNode:
        """Node ``index`` as a downstream entry ``hops`` away; built once, then shared."""
        key = (index, hops)
        found = self._entries.get(key)
        if found is None:  # a race builds an equal value twice: harmless
            found = DownstreamNode.model_construct(  # validated with the shape
                node_id=self.ids[index],
                cost_usd=self.cost[index],
                critical=index in self.critical,
                hops=hops,
            )
            self._entries[key] = found
        return found

    @property
    def dag_id(self) -> str:
        """The DAG's id."""
        return self.shape.dag_id

    @property
    def version(self) -> int:
        """The registered version this index was built from."""
        return self.shape.version

    def is_critical(self, node_id: str) -> bool:
        """Whether ``node_id`` lies on a longest-duration path of the DAG."""
        return self.index[node_id] in self.critical


def _critical_path(
    order: tuple[int, ...], children: tuple[tuple[int, ...], ...], durations: list[float]
) -> tuple[frozenset[int], float]:
    """The nodes on any path of the longest total expected duration, and that duration.

    ``start[u]``: the longest chain of durations before ``u`` begins; ``tail[u]``: the
    longest from ``u`` (included) to a sink. A path through ``u`` lasts at most their sum;
    the nodes where it equals the longest overall are on a critical path (all of them,
    when several paths tie).
    """
    start = [0.0] * len(durations)
    for u in order:
        finish = start[u] + durations[u]
        for child in children[u]:
            if finish > start[child]:
                start[child] = finish
    tail = [0.0] * len(durations)
    for u in reversed(order):
        tail[u] = durations[u] + max((tail[c] for c in children[u]), default=0.0)
    through = [start[u] + tail[u] for u in range(len(durations))]
    longest = max(through)
    slack = CRITICAL_TOLERANCE * max(1.0, longest)
    return frozenset(u for u, total in enumerate(through) if total >= longest - slack), longest
