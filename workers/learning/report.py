"""``python -m workers.learning [--refit] [--png PATH]``: the calibration, per skill.

Prints the current model (version, outcomes, Stage 2's catch rate), each skill's record
and Beta-posterior success rate, and Brier score and expected calibration error of the
prior and of the model on the newest quarter of outcomes (the model refitted on the
older three quarters, so the figures are out of sample); writes a reliability diagram.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from schemas.calibration import CalibrationModel, TrainingOutcome
from workers.connections import redis_client
from workers.evaluate.escalation.calibration import (
    brier,
    catch_rate,
    ece,
    fit,
    historical_reliability,
    predict,
    prior_under,
    reliability,
    skill_success,
)
from workers.learning.refit import refit, training_outcomes
from workers.records.calibration import CalibrationStore
from workers.records.outcomes import OutcomeStore
from workers.settings import Settings, load_settings


def holdout_scores(
    rows: Sequence[TrainingOutcome], *, min_outcomes: int, pseudo_count: float
) -> dict[str, tuple[list[float], list[bool]]]:
    """Predictions of the prior and of a model fitted on the older 3/4, on the newest 1/4."""
    cut = len(rows) * 3 // 4
    model = fit(rows[:cut], version="holdout", min_outcomes=min_outcomes, pseudo_count=pseudo_count)
    held = rows[cut:]
    failed = [r.failed for r in held]
    return {
        "prior": ([r.prior for r in held], failed),
        "learned": (
            [predict(model, prior_under(model, r), r.evidence, r.prior) for r in held],
            failed,
        ),
    }


def plot_reliability(scores: dict[str, tuple[list[float], list[bool]]], path: Path) -> None:
    """Predicted P(fail) against observed failure rate per bin, one line per predictor."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], "k:", label="perfect")
    for name, (probabilities, failed) in scores.items():
        rows = reliability(probabilities, failed)
        ax.plot([p for p, _, _ in rows], [o for _, o, _ in rows], "o-", label=name)
    ax.set_xlabel("predicted P(fail)")
    ax.set_ylabel("observed failure rate")
    ax.set_title("Router calibration (reliability diagram)")
    ax.legend(loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def describe(model: CalibrationModel | None) -> list[str]:
    """The model as lines: headline, skills, evidence map, evaluators' reliability."""
    if model is None:
        return ["no calibration model: the router uses the seed's prior"]
    used = "used" if model.outcomes >= model.min_outcomes and model.weights else "not used yet"
    lines = [
        f"model {model.version}: {model.outcomes} outcomes (evidence map {used}: needs "
        f"{model.min_outcomes}), Stage 2 catch rate {catch_rate(model):.3f} "
        f"({model.catches} caught, {model.misses} missed)",
        f"skills (success rate: claimed -> Beta posterior, pseudo-count {model.pseudo_count:g}):",
    ]
    for skill, record in sorted(model.skills.items()):
        n = record.successes + record.failures
        claimed = record.claimed
        moved = (
            f"claimed {claimed:.3f} -> posterior {skill_success(model, skill, claimed):.3f}"
            if claimed is not None
            else "claimed rate not recorded"
        )
        lines.append(
            f"  {skill}: {n} outcomes, observed success {record.successes / n:.3f}; {moved}"
        )
    if model.weights:
        terms = ", ".join(f"{k} {w:+.3f}" for k, w in sorted(model.weights.items()))
        lines.append(f"evidence map: bias {model.bias:+.3f}; {terms}")
    if model.evaluators:
        lines.append("evaluators (historical reliability: labels that agreed with the truth):")
    for evaluator, graded in sorted(model.evaluators.items()):
        found = historical_reliability(model, evaluator)
        shown = f"{found:.3f}" if found is not None else "too few to use"
        lines.append(
            f"  evaluator {evaluator}: agreed {graded.agreed}/{graded.graded}, reliability {shown}"
        )
    return lines


def report(
    settings: Settings, *, refit_first: bool, png: Path, echo: Callable[[str], None]
) -> None:
    """Print the calibration (after a refit with ``refit_first``), score it, draw the PNG.

    Raises:
        redis.RedisError: Redis did not answer (the callers word it for their operator).
    """
    client = redis_client(settings, max_connections=2)
    try:
        store = CalibrationStore(client, settings.keys, refresh_s=0.0)
        outcomes = OutcomeStore(
            client, settings.keys, kept=settings.outcomes_kept, ttl_s=settings.outcome_retention_s
        )
        least, pseudo = settings.calibration_min_outcomes, settings.calibration_pseudo_count
        client.ping()  # an unreachable Redis is an error here, not "no model"
        model = (
            refit(outcomes, store, min_outcomes=least, pseudo_count=pseudo)
            if refit_first
            else store.load()
        )
        for line in describe(model):
            echo(line)
        rows = training_outcomes(outcomes.export())
    finally:
        client.close()
    if len(rows) < 8:
        echo(f"{len(rows)} labelled outcomes: too few to score calibration")
        return
    scores = holdout_scores(rows, min_outcomes=least, pseudo_count=pseudo)
    echo(f"held out: the newest {len(scores['prior'][0])} of {len(rows)} outcomes")
    for name, (probabilities, failed) in scores.items():
        score, error = brier(probabilities, failed), ece(probabilities, failed)
        echo(f"{name}: Brier {score:.4f}, ECE {error:.4f}")
    plot_reliability(scores, png)
    echo(f"wrote {png}")


def main(argv: list[str] | None = None) -> int:
    """Print the calibration (after a refit with ``--refit``) and write the diagram."""
    parser = argparse.ArgumentParser(prog="python -m workers.learning", description=__doc__)
    parser.add_argument("--refit", action="store_true", help="fit a new model first")
    parser.add_argument("--png", type=Path, default=Path("calibration.png"))
    args = parser.parse_args(argv)
    report(load_settings(), refit_first=args.refit, png=args.png, echo=print)
    return 0
