"""Write docs/references.md's measured figures from ``bench/results/url_refs.json``.

Run: ``python -m bench.url_refs_doc [--check]`` after ``python -m bench.url_refs``. Only the
block between the two markers is rewritten; ``--check`` exits 1 when it is stale (a test
runs it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.generated import write_or_check

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "references.md"
RESULTS = ROOT / "bench" / "results" / "url_refs.json"
START = "<!-- url-refs figures: written by python -m bench.url_refs_doc -->"
END = "<!-- end of url-refs figures -->"


def render(figures: dict[str, Any]) -> str:
    """The figures block: the status table as measured, then the other figures."""
    lines = [
        START,
        "Each row: a loopback page answering so, cited by an otherwise clean note, reviewed",
        "in-process with fetching on (`python -m bench.url_refs`).",
        "",
        "| answer | outcome | verdict | certainty | decision | requests | as the table says |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in figures["status_table"]:
        agrees = "yes" if row["agrees"] else "NO"
        lines.append(
            f"| {row['answer']} | {row['outcome']} | {row['verdict']} | {row['certainty']} "
            f"| {row['decision']} | {row['requests']} | {agrees} |"
        )
    lines += ["", "| quote | found | verdict | certainty | decision |", "|---|---|---|---|---|"]
    for row in figures["quotes"]:
        found = ", ".join(str(f).lower() for f in row["found"])
        lines.append(
            f"| {row['case']} | {found} | {row['verdict']} | {row['certainty']} "
            f"| {row['decision']} |"
        )
    cache, hosts = figures["cache"], figures["host_limits"]
    refused = figures["refusals"]
    lines += [
        "",
        f"- Cache: a `review --jsonl`-style batch citing one URL {cache['batch_citations']} "
        f"times sent {cache['batch_requests_sent']} request(s); "
        f"{cache['concurrent_lookups']} look-ups at once by 4 lanes sharing Redis sent "
        f"{cache['concurrent_requests_sent']} ({cache['concurrent_cache_hits']} answered "
        "from the cache or the other lanes' flight).",
        f"- Per host (limit {hosts['limit']}): 20 URLs of one host at once held at most "
        f"{hosts['memory']['max_in_flight']} in flight in memory and "
        f"{hosts['redis']['max_in_flight']} through Redis.",
        f"- Refusals: {len(refused)} spellings of loopback with no network allowed "
        f"({', '.join(f'`{h}`' for h in refused)}): {sum(refused.values())} connections "
        "attempted.",
    ]
    lines += _cost(figures["cite_nothing"]) + _dates(figures["future_dates"]) + [END]
    return "\n".join(lines)


def _cost(cost: dict[str, Any]) -> list[str]:
    plan = cost["plan_us_per_output"]
    lines = [
        "",
        f"Outputs that cite nothing ({cost['outputs']} tunable HumanEval and CPython stdlib "
        f"outputs with no URL, {cost['rounds']} rounds, fetching off and on interleaved in one "
        "run): p95 of each output's best time, and of every time. Planning the look-ups of "
        f"such an output, what fetching on adds to its review: {plan['median']} µs median, "
        f"{plan['p95']} µs p95.",
        "",
        "| half | n | p95 best, off | p95 best, on | ratio | p95 all, off | p95 all, on "
        "| ratio | total ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for half in ("dev", "test"):
        row = cost[half]
        best, every = row["best_of_rounds"], row["all"]
        lines.append(
            f"| {half} | {row['outputs']} | {best['p95_ms_off']} ms | {best['p95_ms_on']} ms "
            f"| {best['ratio']} | {every['p95_ms_off']} ms | {every['p95_ms_on']} ms "
            f"| {every['ratio']} | {row['total_ratio']} |"
        )
    return lines


def _dates(dates: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"Dated references on right outputs (review date {dates['today']}): outputs the "
        "always-on `FutureReference` check flags (READMEs and HaluEval as the Wall reads "
        "them; of Python sources, their docstrings, which the Wall does not read).",
        "",
        "| source | dev: flagged / outputs | test: flagged / outputs |",
        "|---|---|---|",
    ]
    for source, halves in dates.items():
        if source == "today":
            continue
        cells = [f"{halves[h]['flagged']} / {halves[h]['outputs']}" for h in ("dev", "test")]
        lines.append(f"| {source} | {cells[0]} | {cells[1]} |")
    return lines


def _replace(current: str) -> str:
    figures = json.loads(RESULTS.read_text(encoding="utf-8"))
    block = render(figures)
    if START not in current or END not in current:
        raise SystemExit(f"{DOC} lacks the markers {START} ... {END}")
    head, rest = current.split(START, 1)
    tail = rest.split(END, 1)[1]
    return head + block + tail


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or ``--check``) the figures block of docs/references.md."""
    return write_or_check(DOC, _replace, "python -m bench.url_refs_doc", argv)


if __name__ == "__main__":
    raise SystemExit(main())
