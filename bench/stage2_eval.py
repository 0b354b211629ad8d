"""Stage 2 on the public evaluation's test half: the Ceiling beside Stage 1 alone and both.

Run: ``python -m bench.stage2_eval [--endpoint URL --model M] [--budget N]``.

What a user with a model runs first. The cases are the public evaluation's
(``bench/public``, the same loaders, held-out filter and dev/test split; held-out items
are never read), its TEST half only: HaluEval's three tasks (the input in the task and in
``sources``, no grounding policy declared, as ``bench.public_eval`` counts them), code
(HumanEval and its derived defects), JSON (JSON-Schema-Test-Suite) and SQL (sqlglot's
fixtures and their derived defects). ``--budget N`` takes N test items per source, by the
same hash as ``public_eval``'s sample.

Each case goes through Stage 1, then through Stage 2 with its Stage 1 report, as the
router sends it (``workers.evaluate.run_ceiling``), whether or not the router would
have escalated it, so the Ceiling's own recall and false rejects are measured on every
case past the Floor; the pipeline's figures count Stage 2 only where the router
escalates (priced at the hosted Stage 2 model, as in ``public_eval``, so the same cases
escalate whatever the judge). Where an item has a right and a wrong output, both are
compared in both orders (the position-swap check, BC-EVAL-004).

With no ``--endpoint`` it runs the built-in judge and says so. With one, Stage 2 is the
Messages API judge on that server (``--tool-use forced|offered|none``; tokens priced at
``--price-in/--price-out`` USD per million, 0 by default for a server of one's own).
Figures (no item content) go to ``bench/results/stage2_eval.json``, one entry per judge
(``runs``: ``builtin``, or the model and its tool use), the latest run of each.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bench.public import halueval
from bench.public.case import Case, Expect
from bench.public.engine import STAGE2_MODEL as ROUTER_MODEL
from bench.public.heldout import Half, half_of, sample_rank
from bench.public.sources import load
from bench.public_eval import OVERALL_SHAPE
from bench.stage2_figures import (
    ERROR,
    Recorder,
    Row,
    Swap,
    ceiling_verdict,
    claim_counts,
    render,
)
from bench.stage2_figures import summarise as summarise_rows
from schemas.judging import ModelPrice
from schemas.request import ReviewRequest
from workers.endpoint import DEFAULT_PRICING, JudgeBackend, ToolUse
from workers.evaluate import decide_escalation, finalize, run_ceiling, run_stage1
from workers.evaluate.ceiling.run import both_orders
from workers.judges.base import Judge
from workers.judges.builtin import BuiltinJudge
from workers.judges.ceiling import model_ceiling_judge
from workers.settings import Settings

RESULTS = Path(__file__).parent / "results" / "stage2_eval.json"
SOURCES = (
    *halueval.LAYOUTS,
    "humaneval",
    "json-schema-test-suite",
    "sqlglot-fixtures",
)
ROUTER_PRICE = DEFAULT_PRICING[ROUTER_MODEL]
BUILTIN_NOTE = "no --endpoint: the built-in judge (deterministic, no model called)"


@dataclass
class Progress:
    """A line on stderr every few seconds and at each source's end: done, elapsed, ETA."""

    total: int = 0
    done: int = 0
    every_s: float = 5.0
    started: float = field(default_factory=time.monotonic)
    shown: float = 0.0

    def step(self, name: str, *, last: bool = False) -> None:
        """Count one case of ``name``; print when due."""
        self.done += 1
        now = time.monotonic()
        if not last and now - self.shown < self.every_s:
            return
        self.shown = now
        elapsed = now - self.started
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        print(
            f"stage2_eval: {self.done}/{self.total} cases ({name}), "
            f"{elapsed:.0f}s elapsed, about {eta:.0f}s left",
            file=sys.stderr,
            flush=True,
        )


def sample_test_half(cases: list[Case], budget: int | None) -> list[Case]:
    """The test half's cases; with ``budget``, those of its first N items by sample rank."""
    test = [c for c in cases if half_of(c.benchmark, c.id) is Half.TEST]
    if budget is None or not test:
        return test
    ids = sorted({c.id for c in test}, key=lambda i: sample_rank(test[0].benchmark, i))
    kept = set(ids[:budget])
    return [c for c in test if c.id in kept]


def review_case(case: Case, judge: Recorder) -> tuple[Row, ReviewRequest | None]:
    """One case's three verdicts; any exception is an ``error`` row, never raised."""
    good = case.expect is Expect.ACCEPT
    try:
        request = ReviewRequest.model_validate_json(json.dumps(case.request))
        report = run_stage1(request)
        escalation = decide_escalation(request, stage2_price=ROUTER_PRICE, stage1=report.stage1)
        alone = finalize(request, report, escalation, None).decision.value
        if not report.stage1.floor.passed:
            return Row(good, alone, escalation.escalate, None, alone, alone), None
        before = len(judge.calls)
        stage2 = run_ceiling(request, report, model_ceiling_judge(judge))
        routed = stage2 if escalation.escalate else None
        return Row(
            good,
            alone,
            escalation.escalate,
            ceiling_verdict(stage2),
            finalize(request, report, escalation, routed).decision.value,
            finalize(request, report, escalation, stage2).decision.value,
            stage2.review_ms,
            tuple(judge.calls[before:]),
            claim_counts(stage2),
        ), request
    except Exception:  # counted, never raised: a crash is a finding
        return Row(good, ERROR), None


def swaps_of(cases: list[Case], sent: dict[int, ReviewRequest], judge: Recorder) -> list[Swap]:
    """Each item's right output against its first wrong one, both orders (both sent)."""
    swaps = []
    for item in dict.fromkeys(c.id for c in cases):
        mine = [(i, c) for i, c in enumerate(cases) if c.id == item and i in sent]
        good = next((i for i, c in mine if c.expect is Expect.ACCEPT), None)
        bad = next((i for i, c in mine if c.expect is not Expect.ACCEPT), None)
        if good is None or bad is None:
            continue
        before = len(judge.calls)
        paired = sent[good].model_copy(update={"baseline": sent[bad].output})
        check, _ = both_orders(paired, model_ceiling_judge(judge))
        swaps.append(Swap(check, tuple(judge.calls[before:])))
    return swaps


def run(
    names: Sequence[str], budget: int | None, judge: Recorder, *, pairs: bool = True
) -> dict[str, Any]:
    """Load, sample, review and summarise every named source, then all of them together."""
    loaded = {
        n: load(n, None, halueval.INFERRED, OVERALL_SHAPE if n in halueval.LAYOUTS else None)
        for n in names
    }
    samples = {n: sample_test_half(loaded[n].cases, budget) for n in names}
    progress = Progress(total=sum(map(len, samples.values())))
    figures: dict[str, Any] = {}
    every_row: list[Row] = []
    every_swap: list[Swap] = []
    for name in names:
        rows, sent = [], {}
        for index, case in enumerate(samples[name]):
            row, request = review_case(case, judge)
            rows.append(row)
            if request is not None:
                sent[index] = request
            progress.step(name, last=index == len(samples[name]) - 1)
        if pairs:
            print(f"stage2_eval: {name}: position swaps", file=sys.stderr, flush=True)
        swaps = swaps_of(samples[name], sent, judge) if pairs else []
        figures[name] = {
            "unavailable": loaded[name].unavailable,
            "held_out": loaded[name].held_out,
            **summarise_rows(rows, swaps),
        }
        every_row += rows
        every_swap += swaps
    return {"sources": figures, "overall": summarise_rows(every_row, every_swap)}


def settings_for(args: argparse.Namespace) -> Settings:
    """The Messages API judge's settings: the server, its model on both tiers, its price."""
    key = os.environ.get("WINDAGS_ANTHROPIC_API_KEY") or "unused-by-a-local-server"
    return Settings(
        judge_backend=JudgeBackend.ANTHROPIC,
        anthropic_api_key=SecretStr(key),
        anthropic_base_url=args.endpoint,
        stage1_model=args.model,
        stage2_model=args.model,
        endpoint_input_price_per_mtok=args.price_in,
        endpoint_output_price_per_mtok=args.price_out,
        judge_tool_use=args.tool_use,
        judge_max_tokens=args.max_tokens,
        judge_timeout_s=args.timeout,
        judge_max_attempts=1,
        # The limits a worker would need around calls this long (they must nest).
        stage1_soft_limit_s=int(2 * args.timeout) + 1,
        stage1_hard_limit_s=int(2 * args.timeout) + 31,
        stage2_soft_limit_s=int(6 * args.timeout) + 1,
        stage2_hard_limit_s=int(6 * args.timeout) + 31,
        visibility_timeout_s=int(6 * args.timeout) + 91,
    )


def judge_for(args: argparse.Namespace) -> tuple[Judge, ModelPrice | None, dict[str, Any]]:
    """The judge the arguments name, its price, and how the results describe it."""
    if args.endpoint is None:
        return BuiltinJudge(), None, {"backend": "builtin", "note": BUILTIN_NOTE}
    from workers.judges.anthropic_judge import AnthropicJudge

    settings = settings_for(args)
    described = {
        "backend": "messages-api",
        "endpoint": args.endpoint,
        "model": args.model,
        "tool_use": args.tool_use.value,
        "max_tokens": args.max_tokens,
    }
    return AnthropicJudge(settings), settings.price_of(args.model), described


def main(argv: Sequence[str] | None = None) -> int:
    """Run the measurement, print it, write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--endpoint", help="a Messages API base URL; none: the built-in judge")
    parser.add_argument("--model", help="the model name the endpoint serves (with --endpoint)")
    parser.add_argument("--tool-use", type=ToolUse, choices=list(ToolUse), default=ToolUse.FORCED)
    parser.add_argument("--price-in", type=float, default=0.0, help="USD per million input")
    parser.add_argument("--price-out", type=float, default=0.0, help="USD per million output")
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a judge call")
    parser.add_argument("--budget", type=int, default=20, help="test items per source (0: all)")
    parser.add_argument("--sources", default=",".join(SOURCES), help="comma-separated names")
    parser.add_argument("--no-swap", action="store_true", help="skip the position-swap pairs")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if (args.endpoint is None) != (args.model is None):
        parser.error("--endpoint and --model go together")
    names = [n.strip() for n in args.sources.split(",") if n.strip()]
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        parser.error(f"unknown sources {unknown}; known: {', '.join(SOURCES)}")
    judge, price, described = judge_for(args)
    if args.endpoint is None:
        print(f"stage2_eval: {BUILTIN_NOTE}", file=sys.stderr, flush=True)
    started = time.monotonic()
    try:
        figures = run(names, args.budget or None, Recorder(judge, price), pairs=not args.no_swap)
    finally:
        close = getattr(judge, "close", None)
        if close is not None:
            close()
    results = {
        "judge": described,
        "budget": args.budget or None,
        "half": Half.TEST.value,
        "router_priced_as": ROUTER_MODEL,
        **figures,
        "elapsed_s": round(time.monotonic() - started, 1),
    }
    print(render(results))
    label = write(args.out, results)
    print(f"\nwrote {args.out} (runs[{label!r}])")
    return 0


def label_of(judge: dict[str, Any]) -> str:
    """The key of a judge's run in the results file: one entry per judge, the latest."""
    if judge["backend"] == "builtin":
        return "builtin"
    return f"{judge['model']} (tool use {judge['tool_use']})"


def write(out: Path, results: dict[str, Any]) -> str:
    """Put ``results`` in ``out`` under its judge's label, keeping the other judges' runs."""
    try:
        kept = json.loads(out.read_text())
        runs = kept["runs"] if isinstance(kept, dict) and isinstance(kept.get("runs"), dict) else {}
    except (OSError, ValueError):
        runs = {}
    label = label_of(results["judge"])
    runs[label] = results
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"runs": dict(sorted(runs.items()))}, indent=2) + "\n")
    return label


if __name__ == "__main__":
    raise SystemExit(main())
