"""The figure blocks of the README and the docs pages, each written from bench/results/.

``python -m bench.readme_figures`` writes every block between its markers (and ``--check``,
which a test runs, fails while any differs), so no figure a bench measures is typed by
hand. A block names its page and renders its text from one results file; the words around
a block are the page's own and hold no measured figure.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
COMMAND = "python -m bench.readme_figures"
_START = f"<!-- public-eval figures: written by {COMMAND} -->"
_END = "<!-- end of public-eval figures -->"


@dataclass(frozen=True)
class Block:
    """A block of figures on one page: its markers, and what renders its text."""

    page: str
    """The page's path from the repository's root."""
    name: str
    render: Callable[[], str]

    @property
    def start(self) -> str:
        """The opening marker."""
        return f"<!-- {self.name} figures: written by {COMMAND} -->"

    @property
    def end(self) -> str:
        """The closing marker."""
        return f"<!-- end of {self.name} figures -->"


def results(name: str) -> dict[str, Any]:
    """``bench/results/<name>.json``."""
    loaded: dict[str, Any] = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def usd(value: float) -> str:
    """``$1.46``, ``-$0.08``; whole dollars from $100."""
    shown = f"${abs(value):,.0f}" if abs(value) >= 100 else f"${abs(value):,.2f}"
    return f"-{shown}" if value < 0 else shown


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def headline() -> str:
    """The README's one result: the public evaluation's test half, overall."""
    f = results("public_eval")
    o = f["overall"]["test"]
    return (
        f"On {o['n']:,} labelled cases from public data shipped in packages (the test half; "
        f"nothing tuned on them), the fleet with its built-in judge caught or sent to Stage 2 "
        f"{o['caught_or_escalated']:.1%} of the defective outputs, and rejected "
        f"{o['false_reject']:.1%} of the right ones; p95 review time {o['p95_ms']:.1f} ms."
    )


def public_eval() -> str:
    """The public evaluation's table (``python -m bench.public_eval``)."""
    from bench.readme_figures import render  # the table's layout lives with its command

    return render(results("public_eval")).removeprefix(_START + "\n").removesuffix("\n" + _END)


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


HEADER = ("policy", "Stage 2 spend", "waste averted", "net", "escalated")


def economics() -> str:
    """The synthetic economics (``python -m bench.economics``)."""
    f = results("economics")
    ratios, same, met = f["ratios_over_always"], f["averted_at_learned_spend"], f["targets_met"]
    lines = [
        f"`python -m bench.economics`: {f['seeds']} seeds x {f['nodes_per_seed']} nodes, "
        "outcomes fed back; per seed (`bench/results/economics.json`):",
        "",
        *_table(HEADER, _policy_rows(f["policies"])),
        "",
        f"The learned router spends {ratios['learned']['spend_ratio']:.1%} of always-Stage-2's "
        f"spend and averts {ratios['learned']['averted_ratio']:.1%} of its averted waste. "
        "Targets: "
        + ", ".join(f"{goal} {'met' if ok else 'not met'}" for goal, ok in met.items())
        + ". At the learned router's own spend, the oracle of rates and evidence averts "
        f"{same['evidence_oracle']:.1%}, one that knows only the claimed rates a router sees "
        f"{same['observable_oracle']:.1%}, the learned router {same['learned']:.1%}.",
    ]
    return "\n".join(lines)


def economics_public() -> str:
    """The economics on public data's Stage 1 findings (``--cases public``)."""
    f = results("economics_public")
    lines = [
        f"`python -m bench.economics --cases public`: {f['seeds']} seeds; "
        f"{f['cases']['dev']['n']:,} dev and {f['cases']['test']['n']:,} test cases, "
        f"learned on the dev half, scored on the test half; HaluEval's input in {f['shape']}; "
        "per seed (`bench/results/economics_public.json`).",
    ]
    for setting, s in f["stage2"].items():
        lines += [
            "",
            f"Stage 2 modelled as {setting} (the learned router spends "
            f"{s['learned_spend_share']:.0%} of always's):",
            "",
            *_table(HEADER, _policy_rows(s["policies"])),
        ]
    return "\n".join(lines)


def economics_topology() -> str:
    """Downstream derived from a registered DAG (``--topology``)."""
    f = results("economics_topology")
    names = {
        "derived": "derived from the DAG",
        "direct": "direct consumers only",
        "none": "none sent",
    }
    rows = [
        (
            names.get(mode, mode),
            usd(p["stage2_spend_usd"]),
            usd(p["waste_averted_usd"]),
            usd(p["net_usd"]),
            f"{p['escalation_rate']:.0%}",
            f"{p['caught_by_stage2']:g}",
        )
        for mode, p in f["policies"].items()
    ]
    lines = [
        f"`python -m bench.economics --topology`: {f['seeds']} seeds x {f['nodes_per_seed']}-node "
        "layered DAGs, the cold-start router; waste averted measured by an independent "
        "edge-by-edge cascade, not the formula; per seed "
        "(`bench/results/economics_topology.json`):",
        "",
        *_table(("downstream the router sees", *HEADER[1:], "caught by Stage 2"), rows),
    ]
    return "\n".join(lines)


def _pair(figures: Mapping[str, float]) -> str:
    return f"{figures['recall']:.3f} / {figures['false_reject']:.3f}"


def stage2() -> str:
    """Stage 2 on the public test half (``python -m bench.stage2_eval``)."""
    rows = []
    for name, run in results("stage2_eval")["runs"].items():
        o = run["overall"]
        forms = ", ".join(f"{n} {form}" for form, n in sorted(o["stage2"]["forms"].items()))
        rows.append(
            (
                f"{name} (`--budget {run['budget']}`)",
                _pair(o["stage1"]),
                _pair(o["stage2"]),
                _pair(o["together"]),
                f"{o['together']['escalated']} of {o['n']}",
                forms or "-",
            )
        )
    header = (
        "judge",
        "Stage 1 alone",
        "Ceiling alone",
        "together",
        "escalated",
        "Ceiling replies read as",
    )
    lines = [
        "Recall / false rejects on the test half (`bench/results/stage2_eval.json`):",
        "",
        *_table(header, rows),
    ]
    return "\n".join(lines)


def chaos() -> str:
    """The chaos fault test's figures (``WINDAGS_WRITE_FIGURES=1``, tests/faults/test_chaos.py)."""
    f = results("chaos")
    c, r = f["chaos"], f["three_redis_restarts"]
    return (
        f"Last recorded run (`bench/results/chaos.json`, {c['recorded_at']}): "
        f"{c['quarantined']} of {c['malformed_sent']} malformed messages ({c['malformed_kinds']} "
        f"kinds on {c['queues']} queues) quarantined once each ({c['quarantined_twice']} twice, "
        f"{c['silent_drops']} silent drops); {c['reviewed_once']} reviews on their stream "
        f"exactly once ({c['lost']} lost, {c['duplicated']} duplicated), {c['repaired_reviews']} "
        f"of them with broken schedules; {c['error_entries']} of {c['bad_requests_sent']} bad "
        f"requests answered by an error entry; {c['worker_kills']} workers SIGKILLed and "
        f"{c['redis_restarts']} Redis restart, {c['worker_exits']} worker exits, "
        f"{c['workers_alive_at_end']} workers alive at the end; {c['total_s']:.0f} s. "
        f"Three Redis restarts: {r['reviewed_once']} of {r['reviews']} reviews once, "
        f"{r['lost']} lost, {r['duplicated']} duplicated, {r['worker_exits']} worker exits."
    )


def topology() -> str:
    """Deriving downstream from a registered DAG (``python -m bench.topology``)."""
    f = results("topology")
    rows = [
        (
            str(d["layers"]),
            str(d["edges"]),
            f"{d['all_nodes_ms']:.0f}",
            f"{d['per_request_warm_ms']['p50']:.2f}",
            f"{d['per_request_warm_ms']['p99']:.2f}",
        )
        for d in f["dags"]
    ]
    targets = f["targets_ms"]
    met = ", ".join(f"{goal} {'met' if ok else 'not met'}" for goal, ok in f["targets_met"].items())
    lines = [
        f"`python -m bench.topology`: {f['nodes']}-node layered random DAGs, best of "
        f"{f['repeat']}, {f['cpus']} cores shared with other runs (`bench/results/topology.json`). "
        f"Targets: every node's capped downstream waste and criticality in < "
        f"{targets['all_nodes']:g} ms, one request's derivation in < {targets['per_request']:g} "
        f"ms at the 99th percentile; {met}.",
        "",
        *_table(
            ("layers", "edges", "all nodes, ms", "one request p50, ms", "one request p99, ms"),
            rows,
        ),
    ]
    return "\n".join(lines)


def stage1_io() -> str:
    """One Stage 1 process per pool against a slow model (``python -m bench.stage1_io``)."""
    f = results("stage1_io")
    rows = [
        (
            f"{r['latency_s']:g} s",
            r["pool"],
            str(r["concurrency"]),
            f"{r['reviews_per_s']:.0f}",
            f"{r['pct_of_bound']:.0f}%",
            f"{r['worker_cpu_ms_per_review']:.1f}",
        )
        for r in f["rows"]
    ]
    lines = [
        "`python -m bench.stage1_io` (`bench/results/stage1_io.json`): one Stage 1 process "
        "against a model server that answers after the latency shown; the bound is "
        "concurrency / latency.",
        "",
        *_table(
            ("model latency", "pool", "in flight", "reviews/s", "of bound", "worker CPU ms/review"),
            rows,
        ),
    ]
    return "\n".join(lines)


BLOCKS = (
    Block("README.md", "headline", headline),
    Block("docs/explanation/decision-quality.md", "public-eval", public_eval),
    Block("docs/explanation/two-stages.md", "economics", economics),
    Block("docs/explanation/two-stages.md", "economics-public", economics_public),
    Block("docs/explanation/registered-dags.md", "economics-topology", economics_topology),
    Block("docs/explanation/registered-dags.md", "topology", topology),
    Block("docs/explanation/reliability.md", "chaos", chaos),
    Block("docs/how-to/model-server.md", "stage2", stage2),
    Block("docs/how-to/kubernetes.md", "stage1-io", stage1_io),
)
