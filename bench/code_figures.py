"""Write docs/code.md's measured figures from the code benches' results (``bench/results``).

Run: ``python -m bench.code_figures [--check]``.

The block between the two markers is whatever the last ``python -m bench.code_eval`` and
``python -m bench.code_latency`` measured, never a hand-copied number; ``--check`` exits 1
when the page differs from the results (a test runs it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.generated import write_or_check

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "code.md"
EVAL = ROOT / "bench" / "results" / "code_eval.json"
LATENCY = ROOT / "bench" / "results" / "code_latency.json"
START = "<!-- code figures: written by python -m bench.code_figures -->"
END = "<!-- end of code figures -->"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _half(row: dict[str, Any]) -> str:
    return (
        f"{row['files']} | {_rate(row['floor_false_alarm_rate'])} |"
        f" {_rate(row['fenced_false_alarm_rate'])} | {row['mutants']} |"
        f" {_rate(row['floor_recall'])} | {_rate(row['fenced_recall'])}"
    )


def _languages(figures: dict[str, Any]) -> list[str]:
    lines = [
        "| language | reference parser | half | real files | false alarms, own kind |"
        " false alarms, fenced | mutants | recall, own kind | recall, fenced |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, result in figures["languages"].items():
        for half in ("test", "dev"):
            lines.append(f"| {name} | {result['reference']} | {half} | {_half(result[half])} |")
    return lines


def _docs(figures: dict[str, Any]) -> list[str]:
    docs = figures.get("docs")
    if not docs:
        return []
    lines = [
        "",
        "Documentation's fenced blocks in a language with a parser (blocks / flagged; the"
        " unchecked ones are among the blocks):",
        "",
        "| half | documents | " + " | ".join(sorted(_doc_languages(docs))) + " |",
        "|---|---|" + "---|" * len(_doc_languages(docs)),
    ]
    for half in ("test", "dev"):
        row = docs[half]
        cells = [
            "{} / {}".format(*row["languages"].get(lang, [0, 0]))
            for lang in sorted(_doc_languages(docs))
        ]
        lines.append(f"| {half} | {row['documents']} | " + " | ".join(cells) + " |")
    lines.extend(_doc_slips(docs))
    lines.extend(_flagged_marks(docs))
    for half in ("test", "dev"):
        unchecked = ", ".join(f"{k} {v}" for k, v in sorted(docs[half]["unchecked"].items()))
        readings = ", ".join(f"{k} {v}" for k, v in sorted(docs[half]["readings"].items()))
        lines.append("")
        lines.append(f"- {half}: left unchecked: {unchecked or 'none'}")
        lines.append(f"- {half}: read as written only after a reading: {readings or 'none'}")
    return lines


def _doc_slips(docs: dict[str, Any]) -> list[str]:
    languages = sorted(set(docs["test"].get("mutants", {})) | set(docs["dev"].get("mutants", {})))
    if not languages:
        return []
    lines = [
        "",
        "One slip per operator made in each documentation block that parses as written (to"
        " the engine and to the language's reference parser), kept when the reference"
        " rejects it (flagged as broken / slips):",
        "",
        "| half | " + " | ".join(languages) + " |",
        "|---|" + "---|" * len(languages),
    ]
    for half in ("test", "dev"):
        found = docs[half].get("mutants", {})
        cells = ["{1} / {0}".format(*found.get(lang, [0, 0])) for lang in languages]
        lines.append(f"| {half} | " + " | ".join(cells) + " |")
    return lines


def _flagged_marks(docs: dict[str, Any]) -> list[str]:
    """What the flagged blocks hold of what documentation does on purpose (``doc_marks``)."""
    if "flagged_marks" not in docs["test"]:
        return []
    lines = [
        "",
        "The flagged blocks by what they hold of what documentation does on purpose"
        " (`bench.public.doc_marks`, cast wider than the engine's readings; a block may hold"
        " several). A block holding none is broken code or notation no parser reads:",
        "",
    ]
    for half in ("test", "dev"):
        held = docs[half]["flagged_marks"]
        cells = ", ".join(f"{k} {v}" for k, v in sorted(held.items())) or "none flagged"
        lines.append(f"- {half}: {cells}")
    return lines


def _doc_languages(docs: dict[str, Any]) -> set[str]:
    return set(docs["test"]["languages"]) | set(docs["dev"]["languages"])


def _latency(latency: dict[str, Any]) -> list[str]:
    if not latency:
        return []
    lines = [
        "",
        f"In-process Stage 1, this tree beside {latency['base']} in one run"
        f" ({latency['rounds']} counted rounds, taking turns):",
        "",
        "| outputs | n | p95 before (ms) | p95 after (ms) | ratio | median before | median after |",
        "|---|---|---|---|---|---|---|",
    ]
    groups = sorted(
        (k for k, v in latency.items() if isinstance(v, dict)), key=lambda k: k != "no_code"
    )
    for group in groups:
        row = latency[group]
        label = "markdown without code" if group == "no_code" else f"markdown with {group}"
        lines.append(
            f"| {label} | {row['outputs']} | {row['base_p95_ms']} | {row['candidate_p95_ms']} |"
            f" {row['p95_ratio']} | {row['base_median_ms']} | {row['candidate_median_ms']} |"
        )
    return lines


def render(current: str) -> str:
    """The page with its figures block rewritten from the results."""
    figures = json.loads(EVAL.read_text())
    latency = json.loads(LATENCY.read_text()) if LATENCY.exists() else {}
    block = "\n".join(
        [
            START,
            f"Sample: up to {figures['per_half']} real files per language and half.",
            "",
            *_languages(figures),
            *_docs(figures),
            *_latency(latency),
            END,
        ]
    )
    head, _, rest = current.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{block}{tail}"


def main(argv: Sequence[str] | None = None) -> int:
    return write_or_check(PAGE, render, "python -m bench.code_figures", argv)


if __name__ == "__main__":
    raise SystemExit(main())
