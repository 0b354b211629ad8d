"""The figure blocks of the README and the docs pages, each written from bench/results/.

``python -m bench.readme_figures`` writes every block between its markers (and ``--check``,
which a test runs, fails while any differs), so no figure a bench measures is typed by
hand. A block names its page and renders its text from one results file; the words around
a block are the page's own and hold no measured figure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bench.economics_blocks import economics, economics_public, economics_topology, stage2
from bench.figure_text import results, table

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


def layouts() -> str:
    """HaluEval under every prompt layout (``public_eval_layouts.json``; see its command)."""
    from bench.readme_figures import LAYOUT_END, LAYOUT_START, render_layouts

    rendered = render_layouts(results("public_eval_layouts"))
    return rendered.removeprefix(LAYOUT_START + "\n").removesuffix("\n" + LAYOUT_END)


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
        *table(
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
        *table(
            ("model latency", "pool", "in flight", "reviews/s", "of bound", "worker CPU ms/review"),
            rows,
        ),
    ]
    return "\n".join(lines)


BLOCKS = (
    Block("README.md", "headline", headline),
    Block("docs/explanation/decision-quality.md", "public-eval", public_eval),
    Block("docs/explanation/decision-quality.md", "layout", layouts),
    Block("docs/explanation/two-stages.md", "economics", economics),
    Block("docs/explanation/two-stages.md", "economics-public", economics_public),
    Block("docs/explanation/registered-dags.md", "economics-topology", economics_topology),
    Block("docs/explanation/registered-dags.md", "topology", topology),
    Block("docs/explanation/reliability.md", "chaos", chaos),
    Block("docs/how-to/model-server.md", "stage2", stage2),
    Block("docs/how-to/kubernetes.md", "stage1-io", stage1_io),
)
