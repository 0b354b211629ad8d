"""Fit the cold-start likelihood ratios of Stage 1's suspect findings on public data.

Run: ``python -m bench.fit_suspicion [--lines N] [--write | --check]``.

Stage 1 runs on the DEV half of the tunable HaluEval lines (the held-out quarter is never
read, the test half is left for ``bench.public_eval`` to report), each right and
hallucinated output with its knowledge or document as a source and no grounding policy
declared, as a new user sends it. For each grounding policy the engine applied, a
logistic regression maps the suspect findings (per code: log(1 + count) and penalty sum)
to the label; code weights are kept non-negative (a suspicion never argues for an
output), and the intercept is the policy's baseline: what a check that ran says by
itself. HaluEval is balanced, so the fitted log-odds are likelihood ratios, which the
router adds to the logit of the seed's prior (``workers/evaluate/escalation/suspicion.py``).

Printed: per policy, how often each code fires on good outputs and on defects (the data
behind ``workers/evaluate/wall/certainty.py``'s table), the weights, and the dev-half shares of
good outputs and defects whose likelihood ratio exceeds 0.5, 1, 2 and 3 (the public
bench's node, at the economic margin, escalates above about 1). ``--write`` rewrites
``workers/evaluate/escalation/suspicion_weights.py`` and formats it with ruff (a dev dependency),
with the firing shares and a digest of the findings it was fitted on; ``--check`` exits 1
when the engine's findings on the fit set are no longer those (the weights are then stale:
refit). A test compares the digest of the first ``SHORT_LINES`` lines per file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import subprocess
import sys
import textwrap
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.public import halueval
from bench.public.case import make_request
from bench.public.heldout import Half, half_of
from schemas.request import ReviewRequest
from schemas.stages import Certainty, IssueCode, Stage1Result
from workers.evaluate import run_stage1
from workers.evaluate.escalation import suspicion_weights

WEIGHTS_MODULE = (
    Path(__file__).parents[1] / "workers" / "evaluate" / "escalation" / "suspicion_weights.py"
)
L2 = 0.01
#: Dev lines per file whose findings' digest a test recomputes (``SHORT_DIGEST``).
SHORT_LINES = 12
#: What refits the weights (and records what they were fitted on).
COMMAND = "python -m bench.fit_suspicion --write"
STEPS = 4000
RATE = 0.5
#: Likelihood ratios whose shares are printed (1: where the public bench's node, at the
#: economic margin, starts to escalate).
SHOWN_RATIOS = (0.5, 1.0, 2.0, 3.0)

Row = tuple[dict[str, float], int]


@dataclass
class FitSet:
    """What Stage 1 said on the fit set: rows to fit, firing counts, and their digest."""

    rows: dict[str, list[Row]] = field(default_factory=lambda: defaultdict(list))
    fired: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    digest: Any = field(default_factory=hashlib.sha256)
    """sha256 over every output's findings (code, certainty, penalty) and policy, in order:
    the weights are current while the engine gives the same findings on the same lines."""


def stage1_rows(lines: int | None) -> FitSet:
    """Stage 1 on the first ``lines`` dev lines of each file (all: None)."""
    found = FitSet()
    rows, fired = found.rows, found.fired
    for benchmark, layout in halueval.LAYOUTS.items():
        taken = 0
        for index, record in halueval.lines(benchmark):
            if half_of(benchmark, str(index)) is not Half.DEV:
                continue
            if lines is not None and taken >= lines:
                break
            taken += 1
            task, sources = halueval.node_input(layout, str(index), record, halueval.Shape.SOURCES)
            for label, key in ((0, layout.right), (1, layout.wrong)):
                request = make_request(
                    benchmark=benchmark, item_id=str(index), label=str(label), kind="text",
                    content=str(record[key]).strip(), skill=layout.skill, task=task,
                    sources=sources,
                )  # fmt: skip
                stage1 = run_stage1(ReviewRequest.model_validate_json(json.dumps(request))).stage1
                found.digest.update(_findings(f"{benchmark}:{index}:{label}", stage1).encode())
                policy, features = _features(stage1)
                if policy is None:
                    continue
                rows[policy].append((features, label))
                fired[policy][f"n:{label}"] += 1
                for code in {i.code.value for i in stage1.wall.issues}:
                    fired[policy][f"{code}:{label}"] += 1
    return found


def _findings(output: str, stage1: Stage1Result) -> str:
    """One output's line of the digest: its policy and every Wall finding, sorted."""
    use = stage1.wall.grounding
    issues = sorted(
        f"{i.code.value}/{i.certainty.value}/{i.penalty:.4f}" for i in stage1.wall.issues
    )
    return f"{output} {use.policy.value if use else '-'} {stage1.wall.grade} {' '.join(issues)}\n"


def short_digest() -> str:
    """The digest of the first ``SHORT_LINES`` dev lines of each file: cheap enough for CI."""
    return str(stage1_rows(SHORT_LINES).digest.hexdigest())


def firing(fired: dict[str, Counter[str]]) -> dict[str, dict[str, tuple[float, float]]]:
    """Per policy and code: the share of right outputs and of defects it fires on."""
    shares: dict[str, dict[str, tuple[float, float]]] = {}
    for policy, counts in sorted(fired.items()):
        good, bad = counts["n:0"] or 1, counts["n:1"] or 1
        codes = sorted({k.rsplit(":", 1)[0] for k in counts if not k.startswith("n:")})
        shares[policy] = {
            c: (round(counts[f"{c}:0"] / good, 3), round(counts[f"{c}:1"] / bad, 3)) for c in codes
        }
    return shares


def _features(stage1: Stage1Result) -> tuple[str | None, dict[str, float]]:
    use = stage1.wall.grounding
    if use is None or stage1.wall.grade is None:
        return None, {}
    counts: Counter[str] = Counter()
    penalties: defaultdict[str, float] = defaultdict(float)
    for issue in stage1.wall.issues:
        if issue.certainty is Certainty.SUSPECT:
            counts[issue.code.value] += 1
            penalties[issue.code.value] += issue.penalty
    features = {f"count:{c}": math.log1p(n) for c, n in counts.items()}
    features |= {f"penalty:{c}": p for c, p in penalties.items()}
    return use.policy.value, features


def fit(rows: Sequence[Row]) -> tuple[float, dict[str, float]]:
    """Logistic regression, non-negative feature weights, free intercept."""
    names = sorted({k for features, _ in rows for k in features})
    x = np.array([[f.get(k, 0.0) for k in names] for f, _ in rows])
    y = np.array([label for _, label in rows], dtype=float)
    w, b = np.zeros(len(names)), 0.0
    for _ in range(STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
        g = p - y
        w = np.maximum(0.0, w - RATE * (x.T @ g / len(y) + L2 * w))
        b -= RATE * float(g.mean())
    return round(b, 4), {k: round(float(v), 4) for k, v in zip(names, w, strict=True) if v > 0}


def render_module(
    fitted: dict[str, tuple[float, dict[str, float]]], sizes: dict[str, int], fit_set: FitSet
) -> str:
    """The ``suspicion_weights`` module for ``fitted``, with what it was fitted on."""
    baseline = {p: b for p, (b, _) in sorted(fitted.items())}
    codes: dict[str, dict[str, tuple[float, float]]] = {}
    for policy, (_, weights) in sorted(fitted.items()):
        per: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for key, value in weights.items():
            kind, code = key.split(":", 1)
            per[IssueCode(code).value][0 if kind == "count" else 1] = value
        codes[policy] = {c: (v[0], v[1]) for c, v in sorted(per.items())}
    fitted_on = ", ".join(f"{p}: {n} outputs" for p, n in sorted(sizes.items()))
    data = textwrap.fill(
        f"Data: the dev half of the tunable HaluEval lines ({fitted_on}); L2 {L2}.", width=95
    )
    return (
        '"""Fitted by ``python -m bench.fit_suspicion --write``: do not edit by hand.\n\n'
        f"{data}\n"
        '"""\n\nfrom __future__ import annotations\n\n'
        "#: Log-odds a check that ran adds by itself, per grounding policy.\n"
        f"BASELINE: dict[str, float] = {baseline!r}\n"
        "#: Per policy and suspect code: (weight per log(1 + count), weight per unit of penalty).\n"
        f"CODE_WEIGHTS: dict[str, dict[str, tuple[float, float]]] = {codes!r}\n"
        "#: Per policy applied and code: the share of right outputs and of hallucinated ones\n"
        "#: it fires on (the data behind ``workers/evaluate/wall/certainty.py``'s table).\n"
        f"FIRING: dict[str, dict[str, tuple[float, float]]] = {firing(fit_set.fired)!r}\n"
        "#: sha256 of the engine's findings on the whole fit set, and on its first\n"
        f"#: {SHORT_LINES} dev lines per file (a test compares the latter: cheap enough for CI).\n"
        f"FIT_DIGEST = {fit_set.digest.hexdigest()!r}\n"
        f"SHORT_DIGEST = {short_digest()!r}\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Fit, print, and optionally write the weights."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lines", type=int, default=0, help="dev lines per file (0: all)")
    parser.add_argument("--write", action="store_true", help=f"rewrite {WEIGHTS_MODULE.name}")
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if the findings the weights were fitted on moved",
    )
    args = parser.parse_args(argv)
    fit_set = stage1_rows(args.lines or None)
    if args.check:
        return _check(fit_set)
    rows, fired = fit_set.rows, fit_set.fired
    fitted = {policy: fit(policy_rows) for policy, policy_rows in rows.items()}
    for policy, (bias, weights) in sorted(fitted.items()):
        counts = fired[policy]
        good, bad = counts["n:0"], counts["n:1"]
        print(f"== {policy}: {good} good, {bad} defects (dev half); baseline {bias:+.3f}")
        codes = sorted({k.rsplit(":", 1)[0] for k in counts if not k.startswith("n:")})
        for code in codes:
            print(
                f"   {code:22s} fires on good {counts[f'{code}:0'] / good:.3f}"
                f"  defects {counts[f'{code}:1'] / bad:.3f}"
            )
        for key, value in sorted(weights.items()):
            print(f"   weight {key:32s} {value:+.3f}")
        scores = [
            (bias + sum(weights.get(k, 0.0) * v for k, v in f.items()), y) for f, y in rows[policy]
        ]
        for ratio in SHOWN_RATIOS:
            above = Counter(y for s, y in scores if s > math.log(ratio))
            print(
                f"   likelihood ratio > {ratio:g}: good {above[0] / good:.3f}, "
                f"defects {above[1] / bad:.3f}"
            )
    if args.write:
        if args.lines:
            raise SystemExit("--write fits on every dev line: drop --lines")
        sizes = {p: len(r) for p, r in rows.items()}
        WEIGHTS_MODULE.write_text(render_module(fitted, sizes, fit_set))
        # The module is checked by ruff like any other: let ruff lay out the literal tables.
        subprocess.run([sys.executable, "-m", "ruff", "format", str(WEIGHTS_MODULE)], check=True)
        print(f"wrote {WEIGHTS_MODULE}")
    return 0


def _check(fit_set: FitSet) -> int:
    """Whether the engine still gives the findings the weights were fitted on."""
    if fit_set.digest.hexdigest() == suspicion_weights.FIT_DIGEST:
        print("the weights were fitted on the findings the engine gives now")
        return 0
    print(f"the findings moved since the weights were fitted: run {COMMAND}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
