"""The public evaluation's decisions on a small fixed sample: a baseline a test compares.

Run: ``python -m bench.reproduce --write public-eval`` (writes ``public_eval_short.json``).

The first ``LIMIT`` tunable items of every source (HaluEval with its input in ``sources``),
of which only the dev half is kept: the half that may be looked at. Each case is reviewed
as ``bench.public_eval`` reviews it, and its decision, whether the router escalated it, its
P(fail) and its definite finding codes are recorded. A test reviews the same cases again:
any engine change that moves one decision or finding fails it until the baseline is
written again, on purpose, with the command above.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.public.heldout import Half, half_of
from bench.public.sources import LOADERS, load

RESULTS = Path(__file__).parent / "results" / "public_eval_short.json"
COMMAND = "python -m bench.reproduce --write public-eval"
#: Tunable items taken per source before the dev half is kept (about half of them).
LIMIT = 12


def fresh() -> dict[str, Any]:
    """Every source's dev-half sample, reviewed now."""
    from bench.public_eval import review_case

    sources: dict[str, Any] = {}
    for name in sorted(LOADERS):
        loaded = load(name, LIMIT)
        if loaded.unavailable:
            sources[name] = {"unavailable": loaded.unavailable}
            continue
        cases = [c for c in loaded.cases if half_of(name, c.id) is Half.DEV]
        sources[name] = {f"{c.id}/{c.label}": _line(review_case(c, None)) for c in cases}
    return {"limit": LIMIT, "half": Half.DEV.value, "sources": sources}


def _line(outcome: Any) -> str:
    """``decision escalated p_fail codes``: what the engine decided and why, in one line."""
    escalated = "stage2" if outcome.escalated else "-"
    return f"{outcome.decision} {escalated} {outcome.p_fail} {','.join(outcome.codes) or '-'}"


def committed() -> dict[str, Any] | None:
    """The recorded baseline, or None before one was written."""
    if not RESULTS.exists():
        return None
    figures: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return figures


def write() -> Path:
    """Record the baseline (after a change that is meant to move decisions)."""
    RESULTS.write_text(json.dumps(fresh(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return RESULTS
