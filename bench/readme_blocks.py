"""The README's economics and Stage 2 paragraphs, written from the benches' JSON.

``python -m bench.readme_figures`` writes these blocks with the public-eval table, between
their own markers; its ``--check`` (a test runs it) fails when any block is stale. No
figure in them is typed by hand: each sentence takes its numbers from
``bench/results/economics.json``, ``economics_public.json``, ``economics_topology.json``
or ``stage2_eval.json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Block:
    """A README block: its markers and what renders its text."""

    name: str
    render: Callable[[], str]

    @property
    def start(self) -> str:
        """The opening marker."""
        return f"<!-- {self.name} figures: written by python -m bench.readme_figures -->"

    @property
    def end(self) -> str:
        """The closing marker."""
        return f"<!-- end of {self.name} figures -->"


def _json(name: str) -> dict[str, Any]:
    figures: dict[str, Any] = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    return figures


def usd(value: float, *, sign: bool = True) -> str:
    """``-$1.46``, ``+$0.38`` (or ``$0.38`` with ``sign=False``)."""
    shown = f"${abs(value):,.0f}" if abs(value) >= 100 else f"${abs(value):,.2f}"
    return f"-{shown}" if value < 0 else (f"+{shown}" if sign else shown)


def _pct(value: float) -> str:
    return f"{value:.1%}"


def economics() -> str:
    """The synthetic economics paragraph (``python -m bench.economics``)."""
    f = _json("economics")
    p, ratios, same = f["policies"], f["ratios_over_always"], f["averted_at_learned_spend"]
    learned, met = ratios["learned"], f["targets_met"]
    target = "is met" if all(met.values()) else "is not met"
    ahead = {
        name: p["learned"]["net_usd"] >= p[name]["net_usd"]
        for name in ("evidence_oracle", "rate_oracle")
    }
    order = (
        "at least the nets of both oracles"
        if all(ahead.values())
        else "behind " + " and ".join(n.replace("_", " ") for n, a in ahead.items() if not a)
    )
    return (
        f"Measured (`python -m bench.economics`, {f['seeds']} seeds x {f['nodes_per_seed']} "
        "nodes, outcomes fed back, figures in `bench/results/economics.json`): the learned "
        f"router spends {_pct(learned['spend_ratio'])} of always-Stage-2's spend and averts "
        f"{_pct(learned['averted_ratio'])} of its averted waste (net "
        f"{usd(p['learned']['net_usd'])} per seed; {usd(p['learned']['net_economic_usd'])} net "
        "of its own economic escalations), escalation rate "
        f"{_pct(p['learned']['escalation_rate'])}: {order} (evidence oracle "
        f"{usd(p['evidence_oracle']['net_usd'])}, rate oracle {usd(p['rate_oracle']['net_usd'])}, "
        f"at {_pct(ratios['evidence_oracle']['spend_ratio'])} of always's spend). The target "
        f"(>= 90% at <= 25% spend) {target}: a router that knew every node's true failure rate "
        "and how the Wall's issues split defective from good outputs averts "
        f"{_pct(ratios['evidence_oracle']['averted_ratio'])} at 25% (rates alone "
        f"{_pct(ratios['rate_oracle']['averted_ratio'])}). At the learned router's own spend "
        f"that bound is {_pct(same['evidence_oracle'])}, and {_pct(same['observable_oracle'])} "
        "for an oracle that knows only the claimed rates a router sees (with perfect evidence "
        f"likelihoods); learned averts {_pct(same['learned'])}. Only an oracle that knows the "
        "outcome reaches 100%."
    )


def economics_public() -> str:
    """The real-evidence economics paragraph (``python -m bench.economics --cases public``)."""
    f = _json("economics_public")
    settings = list(f["stage2"].values())

    def each(policy: str) -> str:
        return " / ".join(usd(s["policies"][policy]["net_usd"], sign=False) for s in settings)

    shares = [s["learned_spend_share"] for s in settings]
    rates = ", ".join(f"{s['catch_rate']:g}/{s['false_alarm_rate']:g}" for s in settings)
    ahead = sum(s["seeds_learned_at_least_evidence_oracle"] for s in settings)
    seeds = f["seeds"] * len(settings)
    margins = [
        -s["learned_net_minus_uncapped_oracle_usd"] / s["policies"]["learned"]["net_usd"]
        for s in settings
    ]
    return (
        f"On real evidence (`python -m bench.economics --cases public`, {f['seeds']} seeds; "
        "figures in `bench/results/economics_public.json`): every tunable case of "
        f"`bench.public_eval` ({f['cases']['dev']['n']:,} dev, {f['cases']['test']['n']:,} "
        f"test; HaluEval with its input in {f['shape']}) keeps its label and the Stage 1 "
        "findings the engine really raises, is placed in a DAG as above, and Stage 2 is "
        "modelled by a catch rate and a false-alarm rate. Learned on the dev half, scored on "
        f"the test half, the router spends {min(shares):.0%}-{max(shares):.0%} of always's and "
        f"nets {each('learned')} per seed at catch / false alarm {rates} (always "
        f"{each('always')}, oracle {each('oracle')}). The evidence oracle given the same "
        "spend, held to the seed's rule that a router prices downstream waste capped at 5x "
        f"the node's cost, nets {each('evidence_oracle')}: the learned router is at least as "
        f"good in {ahead} of {seeds} seeds and settings. An oracle that breaks that rule "
        "(ranking on the uncapped waste, which is how waste averted is counted) nets "
        f"{each('evidence_oracle_uncapped')}, {min(margins):.1%} to {max(margins):.1%} more "
        "than the learned router."
    )


def economics_topology() -> str:
    """The topology economics sentence (``python -m bench.economics --topology``)."""
    f = _json("economics_topology")
    p = f["policies"]

    def spent(mode: str) -> str:
        return f"{usd(p[mode]['stage2_spend_usd'], sign=False)}"

    return (
        f"`python -m bench.economics --topology` ({f['seeds']} seeds x "
        f"{f['nodes_per_seed']}-node layered DAGs; waste averted measured by an independent "
        "edge-by-edge cascade, not the formula): derived downstream spends "
        f"{spent('derived')} on Stage 2 and averts "
        f"{usd(p['derived']['waste_averted_usd'], sign=False)} (net "
        f"{usd(p['derived']['net_usd'])}, {p['derived']['escalation_rate']:.0%} of nodes "
        f"escalated) against {spent('direct')}, "
        f"{usd(p['direct']['waste_averted_usd'], sign=False)} and net "
        f"{usd(p['direct']['net_usd'])} ({p['direct']['escalation_rate']:.0%}) when runtimes "
        f"send only their direct consumers, and {spent('none')}, "
        f"{usd(p['none']['waste_averted_usd'], sign=False)} when they send nothing "
        "(`bench/results/economics_topology.json`). Seeing the whole cascade, the cold-start "
        f"router catches {_more(p['derived']['caught_by_stage2'], p['direct']['caught_by_stage2'])}"
        f" defects in Stage 2 ({p['derived']['caught_by_stage2']:g} a seed against "
        f"{p['direct']['caught_by_stage2']:g}) and nets "
        f"{_more(p['derived']['net_usd'], p['direct']['net_usd'], 'less')} than with direct "
        "consumers only."
    )


def _more(value: float, other: float, fewer: str = "fewer") -> str:
    return "more" if value > other else ("no more" if value == other else fewer)


def _pair(figures: dict[str, Any]) -> str:
    return f"{figures['recall']:.3f} / {figures['false_reject']:.3f}"


def stage2() -> str:
    """The Stage 2 measurement paragraph (``python -m bench.stage2_eval``)."""
    runs = _json("stage2_eval")["runs"]
    lines = []
    for name, run in runs.items():
        o, judge = run["overall"], run["judge"]
        who = "the built-in judge" if judge["backend"] == "builtin" else f"{name}"
        s2, swap = o["stage2"], o["swap"]
        lines.append(
            f"At `--budget {run['budget']}` with {who}: Stage 1 alone {_pair(o['stage1'])} "
            f"(recall / false rejects), the Ceiling alone {_pair(s2)}, together "
            f"{_pair(o['together'])} ({o['together']['escalated']} of {o['n']} cases "
            f"escalated); {s2['calls']} Ceiling calls read as {_forms(s2['forms'])}, "
            f"{swap['calls']} swap comparisons as {_forms(swap['forms'])}"
            + (f", {s2['p50_ms'] / 1000:.1f} s median a review." if s2["p50_ms"] >= 1000 else ".")
        )
    return "\n".join(lines)


def _forms(forms: dict[str, int]) -> str:
    return ", ".join(f"{n} {form}" for form, n in sorted(forms.items())) or "nothing"


BLOCKS = (
    Block("economics", economics),
    Block("economics-public", economics_public),
    Block("economics-topology", economics_topology),
    Block("stage2", stage2),
)
