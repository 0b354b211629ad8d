"""Stage 2 spend against defects caught: our router vs always, never and random escalation.

A simulated fleet of DAG nodes is drawn from the labelled corpus (``bench/corpus``).
Population model (fixed a priori, documented here, never tuned per item):

- Skill: success rate ~ U(0.75, 0.98); stage novice/journeyman/expert with weights
  0.2/0.3/0.5; breaker closed/half_open/open with weights 0.85/0.10/0.05.
- Whether a node's output is defective: Bernoulli of the skill's true failure rate,
  ``(1 - success) x stage factor x breaker penalty``, times log-normal noise (sigma 0.5)
  because skill statistics are estimates; the router only sees the recorded statistics.
  A defective node's output is a random defective corpus item (any class, Ceiling-only
  ones included), a good node's a random good one.
- Costs (USD): the node's own cost is log-normal, median $0.03 (sigma 0.8, clipped to
  0.002..0.5); 0-5 downstream nodes, each log-normal median $0.04 (sigma 0.9), critical
  with probability 0.3; cascade probability 0.6 (the seed's default). Hard flags drawn
  independently: final deliverable 4%, feeds a human gate 3%, irreversible 2%.
- Stage 2 cost is the engine's own estimate from the pricing table and the output size.

"Defect caught": a defective output is caught when Stage 1 rejects it (Floor or Wall;
the Wall's partial band fails on the critical path), or when it passes Stage 1, is
escalated and the Ceiling (built-in judge) scores any dimension below 0.8. Nothing else
counts; a good output flagged by Stage 1 or the Ceiling is a false alarm, reported
apart. Every policy keeps Stage 1 and its short circuit: Stage 2 never runs on a node
Stage 1 rejected. Policies: (a) learned = ``decide_escalation`` with the calibration it
learns from outcomes fed back as the simulation runs (``bench.economics_learning``);
(b) cold_start = ``decide_escalation`` with the seed's prior only; (c) always = every
node that passed Stage 1; (d) never; (e) random = as many Stage-1 passes as cold_start
escalated, chosen at random (averaged over draws); (f) oracle = knows which outputs are
defective and escalates exactly the defective Stage-1 passes (the bound no router can
beat); (g) rate_oracle = knows each node's true failure rate (not its outcome), runs the
hard rules, then escalates Stage-1 passes by true rate x waste until it has spent 25% of
what always spends: the best any router working from failure rates can do on that
budget. Figures are averaged over ``--seeds`` seeds.

"Waste averted": the downstream waste (downstream cost x cascade probability, uncapped)
of each defect that only Stage 2 caught; net = averted - Stage 2 spend. That is what the
seed's formula optimises; "defects caught" counts every defect alike, whatever it spoils.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from bench import common
from bench import economics_learning as learning
from bench.corpus import load
from bench.review_corpus import Verdicts, item_request, judge_item
from schemas.request import ReviewRequest
from schemas.result import Stage1Result
from workers.evaluate import decide_escalation, run_stage1
from workers.judges.builtin import BuiltinJudge
from workers.settings import Settings

STAGES = (("novice", 0.2, 1.5), ("journeyman", 0.3, 1.2), ("expert", 0.5, 1.0))
BREAKERS = (("closed", 0.85, 1.0), ("half_open", 0.10, 1.5), ("open", 0.05, 2.0))
FLAG_RATES = {"final_deliverable": 0.04, "feeds_human_gate": 0.03, "irreversible": 0.02}
POLICIES = (
    "learned",
    "cold_start",
    "always",
    "never",
    "random",
    "oracle",
    "rate_oracle",
    "evidence_oracle",
)
#: The spend target, as a share of always-Stage-2's: the rate oracle's budget.
SPEND_SHARE = 0.25
RANDOM_DRAWS = 5


@dataclass(frozen=True)
class Node:
    """One simulated node, reviewed."""

    defective: bool
    stage1_passed: bool
    ceiling_flags: bool
    escalate: bool
    decided: bool
    stage2_cost: float
    #: What this output would spoil downstream if bad: downstream cost x cascade probability.
    waste: float
    request: ReviewRequest
    stage1: Stage1Result
    #: The node's true failure rate (the population model's, noise included): no router sees it.
    true_fail: float = 0.0
    #: The waste the seed lets a router act on: ``waste`` capped at 5x the node's own cost.
    capped_waste: float = 0.0


def _pick(rng: random.Random, table: Sequence[tuple[str, float, float]]) -> tuple[str, float]:
    name, _, factor = rng.choices(table, weights=[w for _, w, _ in table])[0]
    return name, factor


def _lognormal(rng: random.Random, median: float, sigma: float) -> float:
    return median * math.exp(rng.gauss(0.0, sigma))


def draw_context(rng: random.Random) -> dict[str, Any]:
    """A node's own cost, its downstream consumers and its hard flags, as the model draws them.

    Shared with ``bench.economics_public``, which puts public cases in the same places.
    """
    return {
        "node_cost_usd": round(min(0.5, max(0.002, _lognormal(rng, 0.03, 0.8))), 5),
        "downstream": [
            {
                "node_id": f"d{k}",
                "cost_usd": round(_lognormal(rng, 0.04, 0.9), 5),
                "critical": rng.random() < 0.3,
            }
            for k in range(rng.randint(0, 5))
        ],
        "flags": {f: rng.random() < p for f, p in FLAG_RATES.items()},
    }


class Simulation:
    """Draws nodes from the corpus and reviews them with the real engine."""

    def __init__(
        self, items: list[dict[str, Any]], verdicts: dict[str, Verdicts] | None = None
    ) -> None:
        """``verdicts``: each item's, when the caller reviewed them already (``recall`` does)."""
        judge = BuiltinJudge()
        self.good = [i for i in items if i["label"] == "good"]
        self.bad = [i for i in items if i["label"] == "defect"]
        self.verdicts: dict[str, Verdicts] = verdicts or {
            i["id"]: judge_item(i, judge) for i in items
        }
        self._stage1: dict[tuple[str, bool], Stage1Result] = {}
        settings = Settings()
        self.price = settings.price_of(settings.stage2_model)

    def stage1(self, item: dict[str, Any], obj: dict[str, Any]) -> Stage1Result:
        critical = any(d["critical"] for d in obj["downstream"])
        key = (item["id"], critical)
        if key not in self._stage1:
            self._stage1[key] = run_stage1(item_request(item, **obj)).stage1
        return self._stage1[key]

    def node(self, rng: random.Random, index: int) -> Node:
        success = rng.uniform(0.75, 0.98)
        stage, stage_factor = _pick(rng, STAGES)
        breaker, penalty = _pick(rng, BREAKERS)
        true_fail = min(0.95, (1 - success) * stage_factor * penalty * _lognormal(rng, 1, 0.5))
        defective = rng.random() < true_fail
        item = rng.choice(self.bad if defective else self.good)
        obj: dict[str, Any] = {
            "node_id": f"n{index}",
            "skill": {
                "id": "sim",
                "success_rate": round(success, 4),
                "stage": stage,
                "breaker": breaker,
            },
            **draw_context(rng),
        }
        stage1 = self.stage1(item, obj)
        request = item_request(item, **obj)
        decision = decide_escalation(request, stage2_price=self.price, stage1=stage1)
        return Node(
            defective=defective,
            stage1_passed=stage1.passed,
            ceiling_flags=self.verdicts[item["id"]].ceiling_flags,
            escalate=decision.escalate,
            decided=decision.reason.value != "none",
            stage2_cost=decision.stage2_cost,
            waste=decision.raw_downstream_waste,
            request=request,
            stage1=stage1,
            true_fail=true_fail,
            capped_waste=decision.downstream_waste,
        )


def outcome(nodes: list[Node], escalated: list[bool]) -> dict[str, float]:
    """Every policy figure of escalating ``escalated`` among ``nodes`` (see the module doc)."""
    spend = sum(n.stage2_cost for n, e in zip(nodes, escalated, strict=True) if e)
    caught = sum(
        1
        for n, e in zip(nodes, escalated, strict=True)
        if n.defective and (not n.stage1_passed or (e and n.ceiling_flags))
    )
    false_alarms = sum(
        1
        for n, e in zip(nodes, escalated, strict=True)
        if not n.defective and (not n.stage1_passed or (e and n.ceiling_flags))
    )
    # The formula's own objective: downstream waste of the defects only Stage 2 caught.
    averted = sum(
        n.waste
        for n, e in zip(nodes, escalated, strict=True)
        if n.defective and n.stage1_passed and e and n.ceiling_flags
    )
    # Hard-rule escalations (human gate, final deliverable, irreversible) are not the
    # router's choice: net_economic is the net of the escalations it chose on economics.
    hard = [any(n.request.flags.model_dump().values()) for n in nodes]
    chosen = [e and not h for e, h in zip(escalated, hard, strict=True)]
    return {
        "stage2_spend_usd": spend,
        "waste_averted_usd": averted,
        "net_usd": averted - spend,
        "net_economic_usd": _outcome_net(nodes, chosen),
        "escalated": sum(escalated),
        "escalation_rate": sum(escalated) / len(nodes),
        "defects_caught": caught,
        "false_alarms": false_alarms,
    }


def _outcome_net(nodes: list[Node], escalated: list[bool]) -> float:
    pairs = [n for n, e in zip(nodes, escalated, strict=True) if e]
    averted = sum(n.waste for n in pairs if n.defective and n.stage1_passed and n.ceiling_flags)
    return averted - sum(n.stage2_cost for n in pairs)


def simulate(sim: Simulation, seed: int, nodes: int) -> dict[str, Any]:
    """One seed: every policy on the same nodes."""
    rng = random.Random(seed)
    drawn = [sim.node(rng, i) for i in range(nodes)]
    ours = [n.escalate for n in drawn]
    learned, _, final = learning.learned_run(sim, drawn)
    passed = [i for i, n in enumerate(drawn) if n.stage1_passed]
    k = min(sum(ours), len(passed))
    randoms = []
    for _ in range(RANDOM_DRAWS):
        chosen = set(rng.sample(passed, k))
        randoms.append(outcome(drawn, [i in chosen for i in range(len(drawn))]))
    random_mean = {key: fmean(r[key] for r in randoms) for key in randoms[0]}
    return {
        "nodes": nodes,
        "defective": sum(n.defective for n in drawn),
        "router_decided_rate": sum(n.decided for n in drawn) / nodes,
        "learned": outcome(drawn, learned),
        "learned_final_model": final.version if final is not None else None,
        "cold_start": outcome(drawn, ours),
        "oracle": outcome(drawn, [n.defective and n.stage1_passed for n in drawn]),
        "rate_oracle": outcome(drawn, learning.rate_oracle(drawn, SPEND_SHARE)),
        "evidence_oracle": outcome(drawn, learning.evidence_oracle(drawn, SPEND_SHARE)),
        "at_learned_spend": _at_learned_spend(drawn, learned),
        "always": outcome(drawn, [n.stage1_passed for n in drawn]),
        "never": outcome(drawn, [False] * nodes),
        "random": random_mean,
    }


def _at_learned_spend(drawn: list[Node], learned: list[bool]) -> dict[str, float]:
    """Waste averted, as a share of always's, by the learned router and by both oracles
    given the learned router's own spend: how close it comes to the best possible."""
    always = outcome(drawn, [n.stage1_passed for n in drawn])
    mine = outcome(drawn, learned)
    share = mine["stage2_spend_usd"] / always["stage2_spend_usd"]
    averted = always["waste_averted_usd"] or 1.0
    return {
        "spend_share": share,
        "learned": mine["waste_averted_usd"] / averted,
        "rate_oracle": outcome(drawn, learning.rate_oracle(drawn, share))["waste_averted_usd"]
        / averted,
        "evidence_oracle": outcome(drawn, learning.evidence_oracle(drawn, share))[
            "waste_averted_usd"
        ]
        / averted,
        "observable_oracle": outcome(
            drawn, learning.evidence_oracle(drawn, share, learning.claimed_rate)
        )["waste_averted_usd"]
        / averted,
    }


#: The short run a test repeats (``bench.reproduce``): one seed, every policy; the fewest
#: nodes tried (400, 600) at which the learned map's loss of suspect findings (issue 39) shows.
SHORT_SEED, SHORT_NODES = 1000, 600


def short(sim: Simulation) -> dict[str, dict[str, float]]:
    """Every policy's figures on the short run, rounded as the full run rounds them.

    Stored in ``economics.json`` by the full run, so a change that moves the figures
    fails a test until ``python -m bench.economics`` is run again.
    """
    run = simulate(sim, SHORT_SEED, SHORT_NODES)
    figures = {p: {k: round(float(run[p][k]), 4) for k in KEYS} for p in POLICIES}
    figures["at_learned_spend"] = {k: round(v, 4) for k, v in run["at_learned_spend"].items()}
    return figures


def _mean(runs: list[dict[str, Any]], policy: str, key: str) -> float:
    return fmean(float(r[policy][key]) for r in runs)


def plot(summary: dict[str, dict[str, float]], path: Path) -> None:
    """Cost vs defects caught, one point per policy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for policy in POLICIES:
        s = summary[policy]
        ax.scatter(s["stage2_spend_usd"], s["defects_caught"], s=60, label=policy)
        ax.annotate(
            f"{policy} ({s['escalation_rate']:.0%})",
            (s["stage2_spend_usd"], s["defects_caught"]),
            textcoords="offset points",
            xytext=(6, -4),
        )
    ax.set_xlabel("Stage 2 spend (USD, mean per seed)")
    ax.set_ylabel("defects caught (mean per seed)")
    ax.set_title("Escalation policies: cost vs defects caught")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


KEYS = (
    "stage2_spend_usd",
    "waste_averted_usd",
    "net_usd",
    "net_economic_usd",
    "escalated",
    "escalation_rate",
    "defects_caught",
    "false_alarms",
)


def _ratios(policy: dict[str, float], always: dict[str, float]) -> dict[str, float]:
    """A policy against always-Stage-2: spend, waste averted and defects caught."""

    def ratio(key: str) -> float:
        return round(policy[key] / always[key], 4) if always[key] else 0.0

    return {
        "spend_ratio": ratio("stage2_spend_usd"),
        "averted_ratio": ratio("waste_averted_usd"),
        "catch_ratio": ratio("defects_caught"),
    }


def _print_table(summary: dict[str, dict[str, float]], defective: float) -> None:
    rows = [
        [
            p,
            summary[p]["stage2_spend_usd"],
            summary[p]["escalation_rate"],
            summary[p]["defects_caught"],
            round(summary[p]["defects_caught"] / defective, 3) if defective else 0.0,
            summary[p]["false_alarms"],
            summary[p]["waste_averted_usd"],
            summary[p]["net_usd"],
            summary[p]["net_economic_usd"],
        ]
        for p in summary
    ]
    headers = ["policy", "spend_usd", "esc_rate", "caught", "of_defects", "false_alarms"]
    print(common.table([*headers, "averted_usd", "net_usd", "net_economic"], rows))


def _learning(sim: Simulation, seeds: int, nodes: int) -> dict[str, Any]:
    """Learning curve and calibration on held-out simulated nodes (seed 9000)."""
    rng = random.Random(9000)
    held_out = [sim.node(rng, i) for i in range(nodes)]
    rows = learning.training_stream(sim, 5000, max(learning.CURVE))
    models = learning.curve_models(rows)
    curve = learning.summarise_curve(outcome, sim, held_out, models)
    always = outcome(held_out, [n.stage1_passed for n in held_out])
    return {
        "held_out_seed": 9000,
        "training_seed": 5000,
        "calibration": learning.calibration_scores(sim, held_out, models),
        "curve": {
            name: {**{k: round(float(v), 4) for k, v in fig.items()}, **_ratios(fig, always)}
            for name, fig in curve.items()
        },
    }


def run(
    seeds: int = 5,
    nodes: int = 2000,
    *,
    corpus: Path = common.CORPUS_PATH,
    out_dir: Path | None = None,
    with_short: bool = True,
) -> dict[str, Any]:
    """Simulate, print the table, write ``economics.json`` and ``economics.png``.

    ``with_short``: also the short run ``bench.reproduce`` compares (see ``short``).
    """
    sim = Simulation(load(corpus))
    runs = [simulate(sim, 1000 + s, nodes) for s in range(seeds)]
    summary = {p: {k: round(_mean(runs, p, k), 4) for k in KEYS} for p in POLICIES}
    always = summary["always"]
    ratios = {
        p: _ratios(summary[p], always)
        for p in ("learned", "cold_start", "oracle", "rate_oracle", "evidence_oracle")
    }
    same_spend = {
        k: round(fmean(r["at_learned_spend"][k] for r in runs), 4)
        for k in runs[0]["at_learned_spend"]
    }
    defective = fmean(r["defective"] for r in runs)
    _print_table(summary, defective)
    learned = ratios["learned"]
    met = {
        "averted_ratio_min_0.9": learned["averted_ratio"] >= 0.9,
        "spend_ratio_max_0.25": learned["spend_ratio"] <= 0.25,
        "net_positive": summary["learned"]["net_usd"] > 0,
    }
    print(
        f"nodes/seed {nodes}, seeds {seeds}, defective/seed {defective:.1f}; vs always-Stage-2: "
        + "; ".join(
            f"{p} spend {r['spend_ratio']:.1%}, averted {r['averted_ratio']:.1%}, "
            f"caught {r['catch_ratio']:.1%}"
            for p, r in ratios.items()
        )
    )
    print(f"targets (learned): {met}; escalation rate {summary['learned']['escalation_rate']:.1%}")
    bound = ratios["evidence_oracle"]["averted_ratio"]
    print(
        f"why 90% at 25% is out of reach: a router that knew every node's true failure rate and "
        f"how Stage 1's evidence splits defective from good outputs averts {bound:.1%} at "
        f"{SPEND_SHARE:.0%} of always's spend (rates alone: "
        f"{ratios['rate_oracle']['averted_ratio']:.1%}); only the label oracle reaches 100%"
    )
    print(
        f"at the learned router's own spend ({same_spend['spend_share']:.1%} of always's): "
        f"learned averts {same_spend['learned']:.1%}, rate oracle {same_spend['rate_oracle']:.1%}, "
        f"rate+evidence oracle {same_spend['evidence_oracle']:.1%}, claimed rate+evidence "
        f"oracle {same_spend['observable_oracle']:.1%}"
    )
    extra = _learning(sim, seeds, nodes)
    for name, fig in extra["curve"].items():
        cal = extra["calibration"][name]
        print(
            f"  {name}: spend {fig['spend_ratio']:.1%}, averted {fig['averted_ratio']:.1%}, "
            f"net ${fig['net_usd']:.3f} (economic ${fig['net_economic_usd']:.3f}), "
            f"esc {fig['escalation_rate']:.1%}; "
            f"Brier {cal['brier']:.4f}, ECE {cal['ece']:.4f} (held out, n={cal['n']})"
        )
    out = out_dir or common.RESULTS_DIR
    png = out / "economics.png"
    plot(summary, png)
    figures: dict[str, Any] = {
        "seeds": seeds,
        "nodes_per_seed": nodes,
        "defective_per_seed": round(defective, 2),
        "router_decided_rate": round(fmean(r["router_decided_rate"] for r in runs), 4),
        "policies": summary,
        "ratios_over_always": ratios,
        "averted_at_learned_spend": same_spend,
        "targets_met": met,
        "learning": extra,
        "goals": {
            "spend_ratio_max": 0.25,
            "averted_ratio_min": 0.9,
            "net_usd_min": 0.0,
            "escalation_rate": [0.15, 0.20],
        },
        "plot": png.name,  # beside the results file: no machine's absolute path in it
    }
    if with_short:
        figures["short"] = {"seed": SHORT_SEED, "nodes": SHORT_NODES, "figures": short(sim)}
    path = common.write_results("economics", figures, out_dir)
    print(f"wrote {path} and {png}")
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = common.command_line(__doc__)
    parser.add_argument("--seeds", type=int, default=None, help="5; 3 with --cases public")
    parser.add_argument("--nodes", type=int, default=None, help="2000; 400 with --topology")
    parser.add_argument(
        "--topology",
        action="store_true",
        help="layered random DAGs: derived downstream vs per-request lists (economics_topology)",
    )
    parser.add_argument(
        "--cases",
        choices=("corpus", "public"),
        default="corpus",
        help="public: the public evaluation's cases with their real Stage 1 evidence "
        "(economics_public)",
    )
    parser.add_argument(
        "--budget", type=int, default=0, help="with --cases public: items per benchmark (0: all)"
    )
    args = parser.parse_args(argv)
    if args.cases == "public":
        from bench import economics_public

        economics_public.run(args.seeds or 3, args.budget or None)
        return
    if args.topology:
        from bench import economics_topology

        economics_topology.run(args.seeds or 5, args.nodes or 400)
        return
    run(args.seeds or 5, args.nodes or 2000)


if __name__ == "__main__":
    main()
