"""Random DAG shapes for the benches and tests: layered random graphs, drawn by seed.

A layered random graph: the nodes split into layers of random sizes; each node of a
layer feeds 1-3 nodes of the next layer, and with probability ``skip`` one more node
one or two layers further on. Costs are log-normal (median $0.03, sigma 0.8, clipped to
0.002..0.5, the economics bench's node cost); durations log-normal (median 60 s).
"""

from __future__ import annotations

import math
import random

from schemas.topology import DagShape
from workers.topology import dag_from_obj


def layered_dag(
    dag_id: str, nodes: int, *, layers: int, seed: int, skip: float = 0.3, version: int = 1
) -> DagShape:
    """A layered random DAG of ``nodes`` nodes in ``layers`` layers (at least one each)."""
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, nodes), layers - 1)) if layers > 1 else []
    bounds = [0, *cuts, nodes]
    layer_of = [range(bounds[i], bounds[i + 1]) for i in range(layers)]
    edges: set[tuple[int, int]] = set()
    for i in range(layers - 1):
        for u in layer_of[i]:
            following = layer_of[i + 1]
            for v in rng.sample(list(following), min(len(following), rng.randint(1, 3))):
                edges.add((u, v))
            if i + 2 < layers and rng.random() < skip:
                further = layer_of[rng.randint(i + 2, min(layers - 1, i + 3))]
                edges.add((u, rng.choice(list(further))))
    return dag_from_obj(
        {
            "dag_id": dag_id,
            "version": version,
            "nodes": [
                {
                    "node_id": f"n{u}",
                    "cost_usd": round(min(0.5, max(0.002, _lognormal(rng, 0.03, 0.8))), 5),
                    "duration_s": round(_lognormal(rng, 60.0, 0.7), 2),
                }
                for u in range(nodes)
            ],
            "edges": [{"producer": f"n{u}", "consumer": f"n{v}"} for u, v in sorted(edges)],
        }
    )


def _lognormal(rng: random.Random, median: float, sigma: float) -> float:
    return median * math.exp(rng.gauss(0.0, sigma))
