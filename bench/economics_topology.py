"""The economics bench on DAG shapes: downstream derived from a registered DAG, or sent.

``python -m bench.economics --topology [--seeds 3] [--nodes 400]``. Each seed draws a
layered random DAG (``bench.dag_shapes``: ``--nodes`` nodes in 6-14 layers, planned
costs log-normal with median $0.03) and populates its nodes as ``bench.economics`` does
(skill rates, stages, breakers and hard flags drawn alike; a defective node's output a
defective corpus item). The router (cold start: the seed's prior) learns each node's
downstream in one of three ways:

- ``derived``: from the registered shape, what a runtime that registers its DAG and
  sends no list gets: every transitive consumer at its shortest distance, the cascade
  once per hop, critical-path membership by expected duration;
- ``direct``: the runtime sends its direct consumers per request (their cost, and the
  critical flag from the same critical path): the usual list before registration;
- ``none``: the runtime sends nothing, so no node escalates on cost.

The truth is not the formula: a defect spoils each consumer of a spoiled node with the
cascade probability (0.6), edge by edge, independently (``DRAWS`` draws per node, their
mean). "Waste averted" is that realised waste of each defect that only Stage 2 caught
(it passed Stage 1, was escalated, and the built-in Ceiling flags its item); spend is
Stage 2's; net = averted - spend. ``always`` (every Stage 1 pass) and ``oracle`` (exactly
the defective Stage 1 passes) are run on the derived lists' Stage 1. Figures are means
per seed; ``bench/results/economics_topology.json``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from bench import common
from bench.corpus import load
from bench.dag_shapes import layered_dag
from bench.economics import BREAKERS, FLAG_RATES, STAGES, Simulation
from bench.review_corpus import item_request
from workers.evaluate import decide_escalation
from workers.topology import Topology, consumers

MODES = ("derived", "direct", "none")
CASCADE = 0.6
DRAWS = 64
KEYS = ("stage2_spend_usd", "waste_averted_usd", "net_usd", "escalation_rate", "caught_by_stage2")


@dataclass(frozen=True)
class Drawn:
    """One DAG node as populated: its output item, its request fields, its truth."""

    item: dict[str, Any]
    obj: dict[str, Any]
    defective: bool
    realised_waste: float


@dataclass(frozen=True)
class Routed:
    """One node under one way of knowing its downstream."""

    stage1_passed: bool
    escalate: bool
    stage2_cost: float


def _populate(sim: Simulation, topology: Topology, rng: random.Random) -> list[Drawn]:
    out = []
    for index, node in enumerate(topology.shape.nodes):
        success = rng.uniform(0.75, 0.98)
        stage = rng.choices(STAGES, weights=[w for _, w, _ in STAGES])[0]
        breaker = rng.choices(BREAKERS, weights=[w for _, w, _ in BREAKERS])[0]
        noise = rng.lognormvariate(0.0, 0.5)
        true_fail = min(0.95, (1 - success) * stage[2] * breaker[2] * noise)
        defective = rng.random() < true_fail
        obj = {
            "node_id": node.node_id,
            "skill": {
                "id": "sim",
                "success_rate": round(success, 4),
                "stage": stage[0],
                "breaker": breaker[0],
            },
            "node_cost_usd": node.cost_usd,
            "flags": {f: rng.random() < p for f, p in FLAG_RATES.items()},
        }
        waste = _realised_waste(topology, index, rng) if defective else 0.0
        item = rng.choice(sim.bad if defective else sim.good)
        out.append(Drawn(item, obj, defective, waste))
    return out


def _realised_waste(topology: Topology, start: int, rng: random.Random) -> float:
    """Mean cost of the consumers a defect spoils, each edge passing it on with 0.6."""
    total = 0.0
    for _ in range(DRAWS):
        spoiled, frontier = {start}, [start]
        while frontier:
            nxt = []
            for u in frontier:
                for child in topology.children[u]:
                    if child not in spoiled and rng.random() < CASCADE:
                        spoiled.add(child)
                        nxt.append(child)
            frontier = nxt
        total += sum(topology.cost[i] for i in spoiled if i != start)
    return total / DRAWS


def _lists(topology: Topology, node_id: str, mode: str) -> list[dict[str, Any]]:
    if mode == "none":
        return []
    listed = [n.model_dump() for n in consumers(topology, node_id)]
    return listed if mode == "derived" else [n for n in listed if n["hops"] == 1]


def _route(sim: Simulation, topology: Topology, drawn: Drawn, mode: str) -> Routed:
    obj = {**drawn.obj, "downstream": _lists(topology, drawn.obj["node_id"], mode)}
    stage1 = sim.stage1(drawn.item, obj)
    request = item_request(drawn.item, **obj)
    decision = decide_escalation(request, stage2_price=sim.price, stage1=stage1)
    return Routed(stage1.passed, decision.escalate, decision.stage2_cost)


def _outcome(
    sim: Simulation, drawn: list[Drawn], routed: list[Routed], escalated: list[bool]
) -> dict[str, float]:
    spend = sum(r.stage2_cost for r, e in zip(routed, escalated, strict=True) if e)
    caught = [
        d
        for d, r, e in zip(drawn, routed, escalated, strict=True)
        if e and d.defective and r.stage1_passed and sim.verdicts[d.item["id"]].ceiling_flags
    ]
    averted = sum(d.realised_waste for d in caught)
    return {
        "stage2_spend_usd": spend,
        "waste_averted_usd": averted,
        "net_usd": averted - spend,
        "escalation_rate": sum(escalated) / len(drawn),
        "caught_by_stage2": len(caught),
    }


def simulate(sim: Simulation, seed: int, nodes: int) -> dict[str, Any]:
    """One seed: one DAG, every way of knowing its downstream on the same nodes."""
    rng = random.Random(seed)
    shape = layered_dag(f"econ-{seed}", nodes, layers=rng.randint(6, 14), seed=seed)
    topology = Topology(shape)
    drawn = _populate(sim, topology, rng)
    out: dict[str, Any] = {"edges": len(shape.edges), "defective": sum(d.defective for d in drawn)}
    for mode in MODES:
        routed = [_route(sim, topology, d, mode) for d in drawn]
        out[mode] = _outcome(sim, drawn, routed, [r.escalate for r in routed])
        if mode == "derived":
            passed = [r.stage1_passed for r in routed]
            out["always"] = _outcome(sim, drawn, routed, passed)
            oracle = [p and d.defective for p, d in zip(passed, drawn, strict=True)]
            out["oracle"] = _outcome(sim, drawn, routed, oracle)
    return out


#: The short run a test repeats (``bench.reproduce``): one seed of a small DAG.
SHORT_SEED, SHORT_NODES = 2600, 100


def short(sim: Simulation) -> dict[str, Any]:
    """Every mode's figures on the short run; the full run stores them beside its own."""
    run = simulate(sim, SHORT_SEED, SHORT_NODES)
    figures = {p: {k: round(float(run[p][k]), 4) for k in KEYS} for p in (*MODES, "always")}
    return {"seed": SHORT_SEED, "nodes": SHORT_NODES, "figures": figures}


def run(
    seeds: int = 3,
    nodes: int = 400,
    *,
    corpus: Path = common.CORPUS_PATH,
    out_dir: Path | None = None,
) -> dict[str, Any]:
    """Simulate, print the table, write ``economics_topology.json``."""
    sim = Simulation(load(corpus))
    runs = [simulate(sim, 2600 + s, nodes) for s in range(seeds)]
    policies = (*MODES, "always", "oracle")
    summary = {
        p: {k: round(fmean(float(r[p][k]) for r in runs), 4) for k in KEYS} for p in policies
    }
    rows = [[p, *(summary[p][k] for k in KEYS)] for p in policies]
    print(
        common.table(
            ["downstream", "spend_usd", "averted_usd", "net_usd", "esc_rate", "caught"], rows
        )
    )
    print(
        f"{seeds} seeds x {nodes}-node layered DAGs, {fmean(r['defective'] for r in runs):.1f} "
        "defective nodes per seed; averted = realised cascade waste of defects only Stage 2 caught"
    )
    figures = {
        "seeds": seeds,
        "nodes_per_seed": nodes,
        "cascade_probability": CASCADE,
        "draws_per_defect": DRAWS,
        "defective_per_seed": round(fmean(r["defective"] for r in runs), 2),
        "edges_per_seed": round(fmean(r["edges"] for r in runs), 1),
        "policies": summary,
        "short": short(sim),
    }
    return common.publish("economics_topology", figures, out_dir)
