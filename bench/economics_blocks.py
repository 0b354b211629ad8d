"""The economics and Stage 2 blocks: what the router's choices cost and what Stage 2 adds.

Each block is a paragraph that says where the learned router stands (against always, never
and the oracles; the targets met or not), then the table of every policy the bench ran, all
from ``bench/results/economics.json``, ``economics_public.json``, ``economics_topology.json``
or ``stage2_eval.json``. ``python -m bench.readme_figures`` writes them into their pages
(``bench/figure_blocks.py`` says which); no figure in them is typed by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.figure_text import paragraph, pct, results, table, usd

#: How the tables name each policy of ``bench.economics``.
POLICIES = {
    "learned": "learned router",
    "cold_start": "cold start (the seed's prior)",
    "always": "always Stage 2",
    "never": "never Stage 2",
    "random": "random, same rate as cold start",
    "rate_oracle": "oracle of true rates",
    "evidence_oracle": "oracle of rates and evidence",
    "evidence_oracle_uncapped": "evidence oracle, waste uncapped",
    "oracle": "oracle of outcomes",
}
HEADER = ("policy", "Stage 2 spend", "waste averted", "net", "escalated")


def _policy_rows(policies: Mapping[str, Mapping[str, float]]) -> list[tuple[str, ...]]:
    return [
        (
            POLICIES.get(name, name),
            usd(p["stage2_spend_usd"]),
            usd(p["waste_averted_usd"]),
            usd(p["net_usd"]),
            f"{p['escalation_rate']:.1%}",
        )
        for name, p in policies.items()
    ]


def economics() -> str:
    """The synthetic economics (``python -m bench.economics``): a paragraph, then every policy."""
    f = results("economics")
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
    text = (
        f"Measured (`python -m bench.economics`, {f['seeds']} seeds x {f['nodes_per_seed']} "
        "nodes, outcomes fed back, figures in `bench/results/economics.json`): the learned "
        f"router spends {pct(learned['spend_ratio'])} of always-Stage-2's spend and averts "
        f"{pct(learned['averted_ratio'])} of its averted waste (net "
        f"{usd(p['learned']['net_usd'], sign=True)} per seed; "
        f"{usd(p['learned']['net_economic_usd'], sign=True)} net of its own economic "
        f"escalations), escalation rate {pct(p['learned']['escalation_rate'])}: {order} "
        f"(evidence oracle {usd(p['evidence_oracle']['net_usd'], sign=True)}, rate oracle "
        f"{usd(p['rate_oracle']['net_usd'], sign=True)}, at "
        f"{pct(ratios['evidence_oracle']['spend_ratio'])} of always's spend). The target "
        f"(>= 90% at <= 25% spend) {target}: a router that knew every node's true failure rate "
        "and how the Wall's issues split defective from good outputs averts "
        f"{pct(ratios['evidence_oracle']['averted_ratio'])} at 25% (rates alone "
        f"{pct(ratios['rate_oracle']['averted_ratio'])}). At the learned router's own spend "
        f"that bound is {pct(same['evidence_oracle'])}, and {pct(same['observable_oracle'])} "
        "for an oracle that knows only the claimed rates a router sees (with perfect evidence "
        f"likelihoods); learned averts {pct(same['learned'])}. Only an oracle that knows the "
        "outcome reaches 100%. Per seed, every policy:"
    )
    return "\n".join([paragraph(text), "", *table(HEADER, _policy_rows(p))])


def economics_public() -> str:
    """The economics on real evidence (``--cases public``): a paragraph, then each setting."""
    f = results("economics_public")
    settings = list(f["stage2"].values())

    def each(policy: str) -> str:
        return " / ".join(usd(s["policies"][policy]["net_usd"]) for s in settings)

    shares = [s["learned_spend_share"] for s in settings]
    rates = ", ".join(f"{s['catch_rate']:g}/{s['false_alarm_rate']:g}" for s in settings)
    ahead = sum(s["seeds_learned_at_least_evidence_oracle"] for s in settings)
    seeds = f["seeds"] * len(settings)
    margins = [
        -s["learned_net_minus_uncapped_oracle_usd"] / s["policies"]["learned"]["net_usd"]
        for s in settings
    ]
    text = (
        f"On real evidence (`python -m bench.economics --cases public`, {f['seeds']} seeds; "
        "figures in `bench/results/economics_public.json`): every tunable case of "
        f"`bench.public_eval` ({f['cases']['dev']['n']:,} dev, {f['cases']['test']['n']:,} "
        f"test; HaluEval with its input in {f['shape']}) keeps its label and the Stage 1 "
        "findings the engine really raises, is placed in a DAG as the public evaluation "
        "places it, and Stage 2 is modelled by a catch rate and a false-alarm rate. Learned "
        "on the dev half, scored on "
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
    lines = [paragraph(text)]
    for setting, s in f["stage2"].items():
        lines += [
            "",
            f"Stage 2 modelled as {setting} (the learned router spends "
            f"{s['learned_spend_share']:.0%} of always's), per seed:",
            "",
            *table(HEADER, _policy_rows(s["policies"])),
        ]
    return "\n".join(lines)


def economics_topology() -> str:
    """Downstream derived from a registered DAG (``--topology``): a paragraph, then each mode."""
    f = results("economics_topology")
    p = f["policies"]

    def spent(mode: str) -> str:
        return usd(p[mode]["stage2_spend_usd"])

    text = (
        f"`python -m bench.economics --topology` ({f['seeds']} seeds x "
        f"{f['nodes_per_seed']}-node layered DAGs; waste averted measured by an independent "
        "edge-by-edge cascade, not the formula): derived downstream spends "
        f"{spent('derived')} on Stage 2 and averts {usd(p['derived']['waste_averted_usd'])} "
        f"(net {usd(p['derived']['net_usd'], sign=True)}, "
        f"{p['derived']['escalation_rate']:.0%} of nodes escalated) against {spent('direct')}, "
        f"{usd(p['direct']['waste_averted_usd'])} and net "
        f"{usd(p['direct']['net_usd'], sign=True)} ({p['direct']['escalation_rate']:.0%}) when "
        f"runtimes send only their direct consumers, and {spent('none')}, "
        f"{usd(p['none']['waste_averted_usd'])} when they send nothing "
        "(`bench/results/economics_topology.json`). Seeing the whole cascade, the cold-start "
        f"router catches {_more(p['derived']['caught_by_stage2'], p['direct']['caught_by_stage2'])}"
        f" defects in Stage 2 ({p['derived']['caught_by_stage2']:g} a seed against "
        f"{p['direct']['caught_by_stage2']:g}) and nets "
        f"{_more(p['derived']['net_usd'], p['direct']['net_usd'], 'less')} than with direct "
        "consumers only. Per seed, with always and the oracle beside them:"
    )
    names = {
        "derived": "derived from the DAG",
        "direct": "direct consumers only",
        "none": "none sent",
        "always": "always Stage 2",
        "oracle": "oracle of outcomes",
    }
    rows = [
        (
            names.get(mode, mode),
            usd(m["stage2_spend_usd"]),
            usd(m["waste_averted_usd"]),
            usd(m["net_usd"]),
            f"{m['escalation_rate']:.0%}",
            f"{m['caught_by_stage2']:g}",
        )
        for mode, m in p.items()
    ]
    header = ("downstream the router sees", *HEADER[1:], "caught by Stage 2")
    return "\n".join([paragraph(text), "", *table(header, rows)])


def _more(value: float, other: float, fewer: str = "fewer") -> str:
    return "more" if value > other else ("no more" if value == other else fewer)


def _pair(figures: dict[str, Any]) -> str:
    return f"{figures['recall']:.3f} / {figures['false_reject']:.3f}"


def stage2() -> str:
    """Stage 2 on the public test half (``python -m bench.stage2_eval``), one line a judge."""
    runs = results("stage2_eval")["runs"]
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
    return "\n\n".join(paragraph(line) for line in lines)


def _forms(forms: dict[str, int]) -> str:
    return ", ".join(f"{n} {form}" for form, n in sorted(forms.items())) or "nothing"
