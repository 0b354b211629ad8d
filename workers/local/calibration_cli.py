"""``windags-eval calibration``: the learned router's model, per skill, and how well it predicts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workers.local.cli_help import Command
from workers.local.cli_support import settings_or_exit


def calibration(
    refit: Annotated[
        bool, typer.Option("--refit", help="Fit a new model from the outcomes first.")
    ] = False,
    png: Annotated[Path, typer.Option(help="Where to write the reliability diagram.")] = Path(
        "calibration.png"
    ),
) -> None:
    """Show the router's calibration: each skill's record, Brier score, ECE and a diagram.

    Brier score and expected calibration error (ECE) are measured on the newest quarter of
    the labelled outcomes, for the seed's prior and for a model fitted on the older three
    quarters; the reliability diagram (a PNG) plots both. Exits 1 when Redis does not answer.
    """
    from workers.learning.report import report

    settings = settings_or_exit()
    report(settings, refit_first=refit, png=png, echo=typer.echo)  # no Redis: one line, exit 1


def register(app: typer.Typer) -> None:
    """Add ``calibration`` to the ``windags-eval`` app."""
    app.command(cls=Command)(calibration)
