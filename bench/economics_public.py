"""Stage 2 economics on the public evaluation's cases, with the Stage 1 evidence they raise.

Run: ``python -m bench.economics --cases public [--seeds 3] [--budget N]``
(or ``python -m bench.economics_public [--sources a,b]``).

Cases: those of ``bench.public_eval`` (every tunable item, or ``--budget N`` item ids per
benchmark sampled by hash as there; HaluEval in its overall shape: the input in task and
sources, no policy declared). The held-out quarter is never read. Whether a case is
defective is its public label. Each seed puts every case in a DAG as ``bench.economics``
places a node (``draw_context``: own cost, 0-5 downstream consumers, critical ones, hard
flags); the case keeps its own skill claim (0.9, expert, closed), since its label, not a
drawn rate, says whether it is bad. Stage 1 is the engine's, in process, once per case and
critical path (nothing else in the draw changes it).

Stage 2 is modelled, not run: an escalated defective Stage 1 pass is caught with
probability ``catch``, an escalated good one is sent back with probability ``false_alarm``
(a re-execution of a right output: counted apart, with its cost, the node's own). One
uniform draw per case and seed is shared by every policy and setting. Settings: 0.7/0.1,
0.85/0.05, 0.95/0.02.

Policies, scored on the test half: ``learned``, the router with the model the refit task
fits (``economics_learning.refit``) on the dev half's outcomes: every dev Stage 1 pass
with its public label, and Stage 2's catch where the cold-start router escalated a
defective one; ``cold_start``, the router with no model (the seed's prior moved by the
suspect findings' fitted weights); ``always`` (every Stage 1 pass); ``never``; ``oracle``
(exactly the defective Stage 1 passes); ``evidence_oracle``, the synthetic bench's bound
(``economics_learning.evidence_oracle``) given the learned router's spend and held to the
rule every router keeps: it ranks on the downstream waste capped at 5x the node's cost, as
the seed's formula must; ``evidence_oracle_uncapped``, the same ranking on the uncapped
waste the bench counts as averted (a rule no router may break), shown beside it; and
``evidence_oracle@25%`` given 25% of always's as in the synthetic bench. Its "true failure
rate" is the defect share of the case's benchmark in the scored half, its likelihoods are
counted on the scored half's labels: it knows what no router knows. Spend, waste averted,
net (averted - spend) and escalation rate are ``bench.economics.outcome``'s; figures are
means per seed, in ``bench/results/economics_public.json``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import fmean
from typing import Any

from pydantic import ValidationError

from bench import common, economics
from bench import economics_learning as learning
from bench.economics import Node
from bench.public import halueval
from bench.public.case import Expect
from bench.public.heldout import Half, half_of
from bench.public.sources import LOADERS, load
from bench.public_eval import OVERALL_SHAPE, sample
from schemas.calibration import CalibrationModel
from schemas.decisions import EscalationReason
from schemas.judging import ModelPrice
from schemas.request import DownstreamNode, Flags, ReviewRequest
from schemas.result import Stage1Result
from workers.evaluate import decide_escalation, run_stage1
from workers.settings import Settings

#: (catch rate, false-alarm rate) of the modelled Stage 2.
STAGE2_SETTINGS: tuple[tuple[float, float], ...] = ((0.7, 0.1), (0.85, 0.05), (0.95, 0.02))
SAME_SPEND = "evidence_oracle"
UNCAPPED = "evidence_oracle_uncapped"
AT_SHARE = f"evidence_oracle@{economics.SPEND_SHARE:.0%}"
POLICIES = (
    "learned", "cold_start", "always", "never", "oracle", SAME_SPEND, UNCAPPED, AT_SHARE,
)  # fmt: skip
EXTRA_KEYS = ("escalation_rate_of_passes", "caught_by_stage2", "stage2_false_alarms", "rerun_usd")
KEYS = (*economics.KEYS, *EXTRA_KEYS)


@dataclass(frozen=True)
class PublicCase:
    """One public case, validated: its request as the loader built it, its label and half."""

    benchmark: str
    half: Half
    defective: bool
    request: ReviewRequest


@dataclass(frozen=True)
class Router:
    """What the router needs besides a node: Stage 2's price."""

    price: ModelPrice


def public_cases(
    names: Sequence[str], budget: int | None
) -> tuple[list[PublicCase], dict[str, str]]:
    """The public evaluation's cases, and why any named source could not be built."""
    cases: list[PublicCase] = []
    problems: dict[str, str] = {}
    for name in names:
        shape = OVERALL_SHAPE if name in halueval.LAYOUTS else None
        loaded = load(name, None, halueval.INFERRED, shape)
        if loaded.unavailable:
            problems[name] = loaded.unavailable
        invalid = 0
        for case in sample(loaded.cases, budget) if loaded.cases else []:
            try:
                request = ReviewRequest.model_validate_json(json.dumps(case.request))
            except ValidationError:
                invalid += 1  # the fleet's intake refuses it before any routing
                continue
            defective = case.expect is not Expect.ACCEPT
            cases.append(PublicCase(name, half_of(name, case.id), defective, request))
        if invalid:
            problems[name] = f"{invalid} requests the intake refuses"
    return cases, problems


def _placed(case: PublicCase, rng: random.Random) -> ReviewRequest:
    context = economics.draw_context(rng)
    return case.request.model_copy(
        update={
            "node_cost_usd": context["node_cost_usd"],
            "downstream": tuple(DownstreamNode.model_validate(d) for d in context["downstream"]),
            "flags": Flags.model_validate(context["flags"]),
        }
    )


def place(
    cases: Sequence[PublicCase],
    stage1s: dict[tuple[int, bool], Stage1Result],
    rng: random.Random,
    router: Router,
) -> list[Node]:
    """Every case placed in a DAG and routed by the cold-start router (Stage 2 not yet drawn)."""
    nodes = []
    for index, case in enumerate(cases):
        request = _placed(case, rng)
        key = (index, request.feeds_critical_path)
        if key not in stage1s:
            stage1s[key] = run_stage1(request).stage1
        stage1 = stage1s[key]
        decision = decide_escalation(request, stage2_price=router.price, stage1=stage1)
        nodes.append(
            Node(
                defective=case.defective,
                stage1_passed=stage1.passed,
                ceiling_flags=False,
                escalate=decision.escalate,
                decided=decision.reason is not EscalationReason.NONE,
                stage2_cost=decision.stage2_cost,
                waste=decision.raw_downstream_waste,
                request=request,
                stage1=stage1,
                capped_waste=decision.downstream_waste,
            )
        )
    return nodes


def judged(
    nodes: Sequence[Node],
    cases: Sequence[PublicCase],
    draws: Sequence[float],
    setting: tuple[float, float],
) -> list[Node]:
    """The nodes with Stage 2's modelled verdicts and their benchmark's defect share."""
    catch, false_alarm = setting
    counts: Counter[tuple[str, Half, bool]] = Counter(
        (c.benchmark, c.half, c.defective) for c in cases
    )

    def share(c: PublicCase) -> float:
        bad = counts[(c.benchmark, c.half, True)]
        return bad / (bad + counts[(c.benchmark, c.half, False)])

    return [
        replace(n, ceiling_flags=u < (catch if n.defective else false_alarm), true_fail=share(c))
        for n, c, u in zip(nodes, cases, draws, strict=True)
    ]


def figures(nodes: list[Node], chosen: list[bool]) -> dict[str, float]:
    """``bench.economics.outcome``'s figures, and what Stage 2 did on the escalated passes."""
    out = economics.outcome(nodes, chosen)
    reviewed = [n for n, c in zip(nodes, chosen, strict=True) if c and n.stage1_passed]
    alarms = [n for n in reviewed if not n.defective and n.ceiling_flags]
    passes = sum(n.stage1_passed for n in nodes)
    return {
        **out,
        "escalation_rate_of_passes": out["escalated"] / passes if passes else 0.0,
        "caught_by_stage2": sum(n.defective and n.ceiling_flags for n in reviewed),
        "stage2_false_alarms": len(alarms),
        "rerun_usd": sum(n.request.node_cost_usd for n in alarms),
    }


def score(router: Router, test: list[Node], model: CalibrationModel) -> dict[str, Any]:
    """Every policy on the test half, the learned one with ``model``."""
    learned = learning.decisions_with(router, test, model)
    always = [n.stage1_passed for n in test]
    spent = figures(test, learned)["stage2_spend_usd"]
    share = spent / (figures(test, always)["stage2_spend_usd"] or 1.0)
    chosen = {
        "learned": learned,
        "cold_start": [n.escalate for n in test],
        "always": always,
        "never": [False] * len(test),
        "oracle": [n.defective and n.stage1_passed for n in test],
        SAME_SPEND: learning.evidence_oracle(test, share, waste=learning.capped_waste),
        UNCAPPED: learning.evidence_oracle(test, share),
        AT_SHARE: learning.evidence_oracle(test, economics.SPEND_SHARE),
    }
    return {
        "policies": {p: figures(test, c) for p, c in chosen.items()},
        "learned_spend_share": share,
        "calibration": learning.calibration_scores(
            router, test, {"cold_start": None, "learned": model}
        ),
    }


def simulate(
    cases: Sequence[PublicCase],
    stage1s: dict[tuple[int, bool], Stage1Result],
    seed: int,
    router: Router,
) -> dict[str, dict[str, Any]]:
    """One seed: cases placed, then for each Stage 2 setting, learned on dev, scored on test."""
    rng = random.Random(seed)
    placed = place(cases, stage1s, rng, router)
    draws = [rng.random() for _ in cases]
    dev = [c.half is Half.DEV for c in cases]
    out = {}
    for setting in STAGE2_SETTINGS:
        nodes = judged(placed, cases, draws, setting)
        rows = [learning.outcome_of(n, n.escalate) for n, d in zip(nodes, dev, strict=True)
                if d and n.stage1_passed]  # fmt: skip
        model = learning.refit(rows)
        test = [n for n, d in zip(nodes, dev, strict=True) if not d]
        out[label(setting)] = {**score(router, test, model), "dev_outcomes": len(rows)}
    return out


def label(setting: tuple[float, float]) -> str:
    """A Stage 2 setting's name: ``catch 0.85 / false alarm 0.05``."""
    return f"catch {setting[0]:g} / false alarm {setting[1]:g}"


def summarise(runs: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Means per seed for every setting and policy, and the done-when comparison."""
    out: dict[str, dict[str, Any]] = {}
    for setting in STAGE2_SETTINGS:
        name = label(setting)
        per_seed = [r[name] for r in runs]
        policies = {
            p: {k: round(fmean(float(s["policies"][p][k]) for s in per_seed), 4) for k in KEYS}
            for p in POLICIES
        }
        learned, bound = policies["learned"], policies[SAME_SPEND]
        out[name] = {
            "catch_rate": setting[0],
            "false_alarm_rate": setting[1],
            "dev_outcomes": round(fmean(s["dev_outcomes"] for s in per_seed), 1),
            "learned_spend_share": round(fmean(s["learned_spend_share"] for s in per_seed), 4),
            "policies": policies,
            "calibration": {
                m: {k: round(fmean(s["calibration"][m][k] for s in per_seed), 5) for k in c}
                for m, c in per_seed[0]["calibration"].items()
            },
            "learned_net_minus_evidence_oracle_usd": round(
                learned["net_usd"] - bound["net_usd"], 4
            ),
            "learned_net_at_least_evidence_oracle": learned["net_usd"] >= bound["net_usd"],
            "seeds_learned_at_least_evidence_oracle": sum(
                s["policies"]["learned"]["net_usd"] >= s["policies"][SAME_SPEND]["net_usd"]
                for s in per_seed
            ),
            "learned_net_minus_uncapped_oracle_usd": round(
                learned["net_usd"] - policies[UNCAPPED]["net_usd"], 4
            ),
        }
    return out


def render(name: str, setting: dict[str, Any]) -> str:
    """One setting's table: every policy on the test half, means per seed."""
    columns = (
        ("spend_usd", "stage2_spend_usd"),
        ("esc_rate", "escalation_rate"),
        ("esc|pass", "escalation_rate_of_passes"),
        ("caught_s2", "caught_by_stage2"),
        ("averted_usd", "waste_averted_usd"),
        ("net_usd", "net_usd"),
        ("net_econ", "net_economic_usd"),
        ("s2_false", "stage2_false_alarms"),
        ("rerun_usd", "rerun_usd"),
    )
    rows = [[p, *(f[k] for _, k in columns)] for p, f in setting["policies"].items()]
    verdict = "at least" if setting["learned_net_at_least_evidence_oracle"] else "BELOW"
    return "\n".join(
        (
            f"== Stage 2 {name} (test half; learned on {setting['dev_outcomes']:g} dev outcomes)",
            common.table(["policy", *(c for c, _ in columns)], rows),
            f"learned spends {setting['learned_spend_share']:.1%} of always's; its net is "
            f"{verdict} the evidence oracle's at that spend "
            f"({setting['learned_net_minus_evidence_oracle_usd']:+.4f} USD per seed; "
            f"{setting['seeds_learned_at_least_evidence_oracle']} seeds of the run); "
            f"against the oracle that ignores the seed's cap: "
            f"{setting['learned_net_minus_uncapped_oracle_usd']:+.4f} USD per seed",
        )
    )


def run(
    seeds: int = 3,
    budget: int | None = None,
    *,
    names: Sequence[str] = tuple(LOADERS),
    out_dir: Path | None = None,
) -> dict[str, Any]:
    """Place, route and score; print a table per Stage 2 setting; write the results."""
    cases, problems = public_cases(names, budget)
    settings = Settings()
    router = Router(settings.price_of(settings.stage2_model))
    stage1s: dict[tuple[int, bool], Stage1Result] = {}
    runs = [simulate(cases, stage1s, 2000 + s, router) for s in range(seeds)]
    by_half = Counter((c.half.value, c.defective) for c in cases)
    summary = summarise(runs)
    for name, setting in summary.items():
        print(render(name, setting), end="\n\n")
    figures_out: dict[str, Any] = {
        "seeds": seeds,
        "budget": budget,
        "shape": OVERALL_SHAPE.value,
        "grounding": halueval.INFERRED,
        "benchmarks": sorted({c.benchmark for c in cases}),
        "unavailable": problems,
        "cases": {
            h.value: {
                "n": by_half[(h.value, False)] + by_half[(h.value, True)],
                "defective": by_half[(h.value, True)],
            }
            for h in Half
        },
        "stage2": summary,
    }
    path = common.write_results("economics_public", figures_out, out_dir)
    print(f"wrote {path}")
    return figures_out


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: seeds, budget and sources."""
    parser = common.command_line(__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=0, help="items per benchmark (0: all)")
    parser.add_argument("--sources", default=",".join(LOADERS), help="comma-separated names")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.sources.split(",") if n.strip()]
    unknown = [n for n in names if n not in LOADERS]
    if unknown:
        parser.error(f"unknown sources {unknown}; known: {', '.join(LOADERS)}")
    run(args.seeds, args.budget or None, names=names)


if __name__ == "__main__":
    main()
