"""Write docs/packages.md's figures from the package benches' results files.

The files are ``bench/results/package_refs.json`` and ``package_latency.json``.

Run: ``python -m bench.package_figures [--check]`` (a test runs the check, so the page never
quotes a figure the last runs of ``bench.package_refs`` and ``bench.package_latency`` did
not measure).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.generated import write_or_check

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "packages.md"
REFS = ROOT / "bench" / "results" / "package_refs.json"
LATENCY = ROOT / "bench" / "results" / "package_latency.json"
START = "<!-- package figures: written by python -m bench.package_figures -->"
END = "<!-- end of package figures -->"
SOURCES = ("site-packages", "cpython-stdlib", "humaneval", "pypi-readme", "all")
CONTEXTS = (
    "markdown-install",
    "text-uv-add",
    "requirements-line",
    "import-declared",
    "import-undeclared",
)


def _pct(value: float) -> str:
    return f"{100 * value:.2f}%"


def _real(real: dict[str, Any]) -> list[str]:
    rows = [
        "| source | half | outputs | naming a package | with a finding | with a definite one |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for source in SOURCES:
        for half in ("dev", "test"):
            r = real["by_source"].get(f"{source}/{half}")
            if r is None:
                continue
            rows.append(
                f"| {source} | {half} | {r['outputs']} | {r.get('using_packages', 0)} "
                f"| {r['with_finding']} ({_pct(r['finding_rate'])}) "
                f"| {r['with_definite']} ({_pct(r['definite_rate'])}) |"
            )
    return rows


def _made(made: dict[str, Any]) -> list[str]:
    rows = [
        "| context | kind | dev: caught | test: caught | test: flagged | decisions changed |",
        "|---|---|---:|---:|---:|---:|",
    ]
    table = made["by_context"]
    for context in CONTEXTS:
        for kind in ("compound", "near-miss"):
            dev, test = table[f"{context}/{kind}/dev"], table[f"{context}/{kind}/test"]
            changed = (
                str(dev.get("decision_changed", 0) + test.get("decision_changed", 0))
                if context == "import-undeclared"
                else "-"
            )
            rows.append(
                f"| {context} | {kind} | {dev['definite']}/{dev['names']} ({_pct(dev['caught'])}) "
                f"| {test['definite']}/{test['names']} ({_pct(test['caught'])}) "
                f"| {_pct(test['flagged'])} | {changed} |"
            )
    return rows


def _latency(figures: dict[str, Any]) -> list[str]:
    commit = figures["base"]["commit"][:7]
    rows = ["| clock | tree | p50 ms | p95 ms | mean ms | p95 ratio | p50 ratio |"]
    rows.append("|---|---|---:|---:|---:|---:|---:|")
    for clock in ("cpu", "wall"):
        c = figures[clock]
        for name, side in ((f"base ({commit})", c["base"]), ("this tree", c["branch"])):
            ratios = f"{c['p95_ratio']} | {c['p50_ratio']}" if name == "this tree" else "- | -"
            rows.append(
                f"| {clock} | {name} | {side['p50_ms']} | {side['p95_ms']} | {side['mean_ms']} "
                f"| {ratios} |"
            )
    rows += [
        "",
        f"{figures['requests']} outputs citing nothing, {figures['rounds']} alternating rounds, "
        f"{figures['samples_per_side']} timed reviews per tree.",
    ]
    return rows


def render(current: str) -> str:
    """``current`` with its figures block rewritten from the results files."""
    refs = json.loads(REFS.read_text(encoding="utf-8"))
    latency = json.loads(LATENCY.read_text(encoding="utf-8"))
    block = [
        START,
        "",
        "Real outputs (expect no package finding; snapshot as the authority):",
        "",
        *_real(refs["real"]),
        "",
        "Hallucinated names (caught: a definite finding; for the import with no environment, "
        "flagged is a suspect one):",
        "",
        *_made(refs["hallucinated"]),
        "",
        "In-process review of outputs that cite nothing, beside the base commit in one run:",
        "",
        *_latency(latency),
        "",
        END,
    ]
    head, _, rest = current.partition(START)
    _, _, tail = rest.partition(END)
    return head + "\n".join(block) + tail


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or ``--check``) the figures block of docs/packages.md."""
    return write_or_check(DOC, render, "python -m bench.package_figures", argv)


if __name__ == "__main__":
    raise SystemExit(main())
