"""Write the figure blocks of the README and the docs pages from ``bench/results/``.

Run: ``python -m bench.readme_figures [--check]``.

Each block (``bench/figure_blocks.py`` lists them, by page) sits between two markers, so
the figures it shows are whatever the last bench run measured and never a hand-copied
number. The public evaluation's two tables, laid out here, quote the test half only (the
dev half was tuned on): every source, and HaluEval under every prompt layout
(``public_eval_layouts.json``, from ``python -m bench.public_eval --sources
halueval-qa,halueval-summarization,halueval-dialogue --layouts all --budget N --out
bench/results/public_eval_layouts.json``). ``--check`` exits 1 when any page differs from
the results (a test runs it); a page whose results file is missing is named, left as it
is, and fails the run too.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from bench.figure_blocks import BLOCKS, COMMAND
from bench.generated import write_or_check

ROOT = Path(__file__).resolve().parents[1]
START = "<!-- public-eval figures: written by python -m bench.readme_figures -->"
END = "<!-- end of public-eval figures -->"
LAYOUT_START = "<!-- layout figures: written by python -m bench.readme_figures -->"
LAYOUT_END = "<!-- end of layout figures -->"
#: (family, how the page names it), in the order shown.
FAMILIES = (
    ("benchmark", "the benchmark's own templates"),
    ("common", "layouts runtimes ship"),
    ("unusual", "unusual layouts written for the bench"),
    ("blind", "layouts written blind (engine then improved on them)"),
    ("unseen", "layouts written blind, never looked at"),
)

#: (label, benchmark row, peer) of the code and data sources, in the order shown.
CODE_ROWS = (
    ("CPython's stdlib", "cpython-stdlib", "pyflakes-errors"),
    ("installed third-party modules", "site-packages", "pyflakes-errors"),
    ("published package descriptions", "pypi-readme", None),
    ("the JSON-Schema-Test-Suite", "json-schema-test-suite", "jsonschema"),
    ("sqlglot's fixtures", "sqlglot-fixtures", "sqlglot.parse"),
    ("HumanEval", "humaneval", "pyflakes-errors"),
    ("CPython's syntax tests", "cpython-test", "pyflakes-errors"),
)
HALUEVAL = (
    ("QA", "halueval-qa"),
    ("summaries", "halueval-summarization"),
    ("dialogue", "halueval-dialogue"),
)
SHAPES = ("sources", "task", "both")


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render(figures: dict[str, Any]) -> str:
    """The README block for ``figures`` (test half only)."""
    rows = figures["benchmarks"]
    budget = figures.get("budget")
    sample = f"{budget} items per benchmark, sampled by hash" if budget else "every tunable item"
    lines = [
        START,
        f"Test half ({sample}; the dev half was tuned on and is in the JSON beside it):",
        "",
        "| source | n | recall | false rejects | sent back by Stage 1 alone | defects caught"
        " or escalated | right outputs escalated | reachable within 0.35 escalated |"
        " peer (recall / false rejects) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, name, peer in CODE_ROWS:
        if name in rows and not rows[name]["unavailable"]:
            lines.append(_line(label, rows[name]["test"], peer))
    for label, name in HALUEVAL:
        for shape in SHAPES:
            row = rows.get(f"{name}[{shape}]")
            if row is not None and not row["unavailable"]:
                shown = f"HaluEval {label}, input in {shape}"
                lines.append(_line(shown, row["test"], "unigram-overlap"))
    overall = figures["overall"]["test"]
    lines.append(_line("overall", overall, None))
    agreement = figures.get("shape_agreement", {})
    if agreement:
        alike = ", ".join(f"{label} {_f(agreement[n]['test'])}" for label, n in HALUEVAL)
        lines += ["", f"HaluEval decided alike whichever request shape carries the input: {alike}."]
    gaps = [max(r["gap"].values(), default=0.0) for r in rows.values() if not r["unavailable"]]
    lines.append(
        f"Largest gap between the dev and test halves of any figure: {_f(max(gaps, default=None))}"
        f"; p95 review time {overall['p95_ms']:.1f} ms."
    )
    return "\n".join([*lines, END])


def _line(label: str, half: dict[str, Any], peer: str | None) -> str:
    shown = "-"
    if peer is not None and peer in half["peers"]:
        p = half["peers"][peer]
        shown = f"{peer} {_f(p['recall'])} / {_f(p['false_reject'])}"
    cells = (
        label,
        str(half["n"]),
        _f(half["recall"]),
        _f(half["false_reject"]),
        _f(half["definite_false_reject"]),
        _f(half["caught_or_escalated"]),
        _f(half["good_escalated"]),
        _f(half.get("reachable_within_bound")),
        shown,
    )
    return "| " + " | ".join(cells) + " |"


def render_layouts(figures: dict[str, Any]) -> str:
    """The layout run's block: per family, task and shape, the test half."""
    families = figures.get("layout_families", {})
    rows = figures["benchmarks"]
    budget = figures.get("budget")
    sample = f"{budget} items per task, sampled by hash" if budget else "every tunable item"
    lines = [
        LAYOUT_START,
        f"Test half ({sample}), no policy declared; each layout family pooled:",
        "",
        "| input in | layouts | task | n | decided as with `sources` | Stage 1 and router alike"
        " | policy as with `sources` | defects caught or escalated (with `sources`) | right"
        " outputs sent back by Stage 1 alone |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for shape in ("task", "both"):
        for family, shown in FAMILIES:
            for label, name in HALUEVAL:
                row = families.get(f"{name}[{shape}:{family}]")
                sourced = rows.get(f"{name}[sources]")
                if row is None or sourced is None:
                    continue
                test, agreed = row["test"], row["agreement_with_sources"]
                caught = _f(test["caught_or_escalated"])
                caught += f" ({_f(sourced['test']['caught_or_escalated'])})"
                cells = (
                    f"`{shape}`", shown, label, str(test["n"]), _f(agreed["decision"]["test"]),
                    _f(agreed["routing"]["test"]), _f(agreed["policy"]["test"]), caught,
                    _f(test["definite_false_reject"]),
                )  # fmt: skip
                lines.append("| " + " | ".join(cells) + " |")
    return "\n".join([*lines, LAYOUT_END])


def updated(text: str, block: str, start: str = START, end: str = END) -> str:
    """``text`` with the block between the markers replaced (``block`` holds them)."""
    head, found_start, rest = text.partition(start)
    _, found_end, tail = rest.partition(end)
    if not found_start or not found_end:
        raise SystemExit(f"no {start!r} ... {end!r} block")
    return head + block + tail


def _with_blocks(page: str, text: str) -> str:
    for block in BLOCKS:
        if block.page == page:
            text = updated(
                text, "\n".join([block.start, block.render(), block.end]), block.start, block.end
            )
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite every page's blocks, or with ``--check`` report whether they are current."""
    failed = 0
    for page in dict.fromkeys(block.page for block in BLOCKS):
        try:
            failed |= write_or_check(ROOT / page, partial(_with_blocks, page), COMMAND, argv)
        except FileNotFoundError as missing:
            print(f"{page} not written: {missing.filename} is missing", file=sys.stderr)
            failed = 1
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
