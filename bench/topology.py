"""How long deriving downstream economics from a registered DAG takes.

``python -m bench.topology [--nodes 1000] [--repeat 5]``. For layered random DAGs
(``bench.dag_shapes``, seed 26) of ``--nodes`` nodes at three depths (10, 30 and 100
layers), it times, on this machine, best of ``--repeat`` runs (garbage collection off
while timing, as a server's steady state has little of it):

- validate: decoding the shape's JSON into a ``DagShape`` (bounds, known ids, no cycle);
- index: ``Topology(shape)`` (consumers, topological order, critical path);
- all nodes: ``all_economics`` for every node: the capped downstream waste the router
  prices and critical-path membership (target < 50 ms at 1,000 nodes);
- all lists: ``consumers`` for every node, the full lists every request would carry;
- per request: ``with_derived_downstream`` on a request without ``downstream`` for each
  node in turn, the DAG indexed and cached as Stage 1 keeps it (target < 1 ms): the
  first pass over all nodes (cold: each list entry built once) and a warm pass.

Writes ``bench/results/topology.json``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import common
from bench.dag_shapes import layered_dag
from schemas.request import ReviewRequest
from workers.topology import Topology, all_economics, consumers, decode_dag
from workers.topology import with_derived_downstream as derive

LAYERS = (10, 30, 100)
SEED = 26
CASCADE = 0.6
TARGET_ALL_MS = 50.0
TARGET_REQUEST_MS = 1.0


def _best_ms(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return min(times)


def _per_request_ms(topology: Topology) -> list[float]:
    base = ReviewRequest.model_validate_json(
        '{"dag_id": "bench", "node_id": "n0", "skill": {"id": "s", "success_rate": 0.9},'
        ' "output": {"kind": "text", "content": "x"}}'
    )
    requests = [base.model_copy(update={"node_id": node}) for node in topology.ids]
    out = []
    for request in requests:
        started = time.perf_counter()
        derive(request, topology)
        out.append((time.perf_counter() - started) * 1000)
    return out


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "mean": round(sum(values) / len(values), 4),
        "p50": round(common.percentile(values, 50), 4),
        "p95": round(common.percentile(values, 95), 4),
        "p99": round(common.percentile(values, 99), 4),
        "max": round(max(values), 4),
    }


def structure(nodes: int, layers: int) -> dict[str, Any]:
    """A DAG's figures that no clock moves: the short run a test repeats (``bench.reproduce``)."""
    shape = layered_dag("bench", nodes, layers=layers, seed=SEED)
    topology = Topology(shape)
    return {
        "layers": layers,
        "nodes": nodes,
        "edges": len(shape.edges),
        "mean_consumers": round(sum(len(consumers(topology, n)) for n in topology.ids) / nodes, 1),
        "critical_path_nodes": len(topology.critical),
    }


def measure(nodes: int, layers: int, repeat: int) -> dict[str, Any]:
    """One DAG's figures."""
    shape = layered_dag("bench", nodes, layers=layers, seed=SEED)
    text = shape.model_dump_json()
    topology = Topology(shape)
    gc.collect()
    gc.disable()
    try:
        figures: dict[str, Any] = {
            **structure(nodes, layers),
            "validate_ms": round(_best_ms(lambda: decode_dag(text), repeat), 2),
            "index_ms": round(_best_ms(lambda: Topology(shape), repeat), 2),
            "all_nodes_ms": round(_best_ms(lambda: all_economics(topology, CASCADE), repeat), 2),
            "all_lists_ms": round(
                _best_ms(lambda: [consumers(topology, n) for n in topology.ids], repeat), 2
            ),
        }
        fresh = Topology(shape)
        figures["per_request_cold_ms"] = _stats(_per_request_ms(fresh))
        warm = [_per_request_ms(fresh) for _ in range(repeat)]
        figures["per_request_warm_ms"] = _stats([min(t) for t in zip(*warm, strict=True)])
    finally:
        gc.enable()
    return figures


def run(nodes: int = 1000, repeat: int = 5, out_dir: Path | None = None) -> dict[str, Any]:
    """Measure every depth, print the table, write ``topology.json``."""
    rows = [measure(nodes, layers, repeat) for layers in LAYERS]
    headers = ["layers", "edges", "consumers", "validate", "index", "all nodes", "all lists"]
    headers += ["req p50", "req p95", "req max", "cold p95"]
    print(
        common.table(
            headers,
            [
                [
                    r["layers"],
                    r["edges"],
                    r["mean_consumers"],
                    r["validate_ms"],
                    r["index_ms"],
                    r["all_nodes_ms"],
                    r["all_lists_ms"],
                    r["per_request_warm_ms"]["p50"],
                    r["per_request_warm_ms"]["p95"],
                    r["per_request_warm_ms"]["max"],
                    r["per_request_cold_ms"]["p95"],
                ]
                for r in rows
            ],
        )
    )
    print("milliseconds; targets: all nodes < 50, per request < 1")
    figures = {
        "nodes": nodes,
        "seed": SEED,
        "cascade_probability": CASCADE,
        "repeat": repeat,
        "targets_ms": {"all_nodes": TARGET_ALL_MS, "per_request": TARGET_REQUEST_MS},
        "dags": rows,
        "targets_met": {
            "all_nodes": all(r["all_nodes_ms"] < TARGET_ALL_MS for r in rows),
            "per_request_p99": all(
                r["per_request_warm_ms"]["p99"] < TARGET_REQUEST_MS for r in rows
            ),
        },
    }
    return common.publish("topology", figures, out_dir)


def main(argv: list[str] | None = None) -> None:
    parser = common.command_line(__doc__)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    run(args.nodes, args.repeat)


if __name__ == "__main__":
    main()
