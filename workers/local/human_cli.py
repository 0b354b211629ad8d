"""The human gate's commands: ``review-ui``, ``verdict``, ``outcomes export|report``."""

from __future__ import annotations

import getpass
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer

from schemas.human import VerdictAction, VerdictInput
from schemas.quality import Dimension
from schemas.request import review_key
from workers.errors import ConfigurationError
from workers.local.cli_help import Command
from workers.local.cli_help import app as plain_app
from workers.local.cli_support import fail, interruptible, settings_or_exit
from workers.settings import Settings

outcomes = plain_app(no_args_is_help=True, help="Labelled outcomes.")


def review_ui(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8400,
) -> None:
    """Serve the review page for the human gate until Ctrl-C.

    Needs WINDAGS_REVIEW_UI_TOKEN (reviewers sign in with it and a name) or
    WINDAGS_REVIEW_UI_AUTH_HEADER (an authenticating proxy's user header). Prints the
    page's address and how to sign in once it listens.
    """
    from workers.local.review_page import serve

    try:
        with interruptible():
            serve(settings_or_exit(), host=host, port=port, announce=typer.echo)
    except ConfigurationError as exc:
        raise fail(str(exc)) from None


def _scores(pairs: list[str]) -> dict[Dimension, float]:
    scores: dict[Dimension, float] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        try:
            scores[Dimension(name.strip())] = float(value)
        except ValueError:
            known = ", ".join(d.value for d in Dimension)
            raise fail(f"--score {pair!r}: want DIM=0.x with DIM one of {known}") from None
    return scores


def verdict(
    dag_id: Annotated[str, typer.Argument(help="The DAG run.")],
    node_id: Annotated[str, typer.Argument(help="The node.")],
    attempt: Annotated[int, typer.Argument(help="The attempt judged.")],
    accept: Annotated[bool, typer.Option("--accept", help="Let the output go on.")] = False,
    reject: Annotated[bool, typer.Option("--reject", help="The output is wrong.")] = False,
    send_back: Annotated[bool, typer.Option("--send-back", help="Fix and retry.")] = False,
    feedback: Annotated[str | None, typer.Option(help="What the node should change.")] = None,
    score: Annotated[
        list[str] | None,
        typer.Option(metavar="DIM=0.x", help="A dimension's score; repeatable."),
    ] = None,
    comment: Annotated[str | None, typer.Option(help="A note for the record.")] = None,
    reviewer: Annotated[str | None, typer.Option(help="Who judges (default: $USER).")] = None,
) -> None:
    """Record a person's verdict on an escalated attempt, exactly once.

    Prints the decision recomputed with it (JSON); exits 1 when the attempt was already
    decided, is claimed by another reviewer, or does not wait for a person (naming the
    demo's key prefix when it waits there instead).
    """
    from pydantic import ValidationError

    from workers.client import ReviewClient
    from workers.human import RecordStatus, VerdictRefusedError

    chosen = [a for a, on in zip(VerdictAction, (accept, reject, send_back), strict=True) if on]
    if len(chosen) != 1:
        raise fail("give exactly one of --accept, --reject, --send-back")
    settings = settings_or_exit()
    try:
        given = VerdictInput(
            action=chosen[0], scores=_scores(score or []), feedback=feedback, comment=comment
        )
    except ValidationError as exc:
        raise fail(str(exc.errors(include_url=False)[0]["msg"])) from None
    client = ReviewClient(settings)
    try:
        done = client.record_verdict(
            dag_id, node_id, attempt, given, reviewer=reviewer or getpass.getuser()
        )
    except VerdictRefusedError as exc:
        hint = ""
        if exc.recorded.status is RecordStatus.MISSING:
            hint = _demo_hint(settings, review_key(dag_id, node_id, attempt))
        raise fail(f"{exc}{hint}", 1) from None
    finally:
        client.close()
    assert done.decision is not None
    typer.echo(done.decision.model_dump_json(indent=2))
    typer.echo(f"recorded: entries {' '.join(done.entry_ids)}", err=True)


def _demo_hint(settings: Settings, review_key: str) -> str:
    """Where the attempt waits when the demo's key prefix has it (``windags-eval demo``)."""
    from workers.connections import redis_client
    from workers.local.demo_keys import demo_settings

    demo = demo_settings(settings)
    client = redis_client(demo, max_connections=1)
    try:
        if not client.exists(demo.keys.human_item(review_key)):
            return ""
    finally:
        client.close()
    return (
        f" under the key prefix {settings.key_prefix}; it waits under the demo's "
        f"({demo.key_prefix}): run the same command with WINDAGS_KEY_PREFIX={demo.key_prefix}"
    )


@outcomes.command("export", cls=Command)
def export(
    out: Annotated[str | None, typer.Option(help="Write JSONL here, not stdout.")] = None,
    skill: Annotated[str | None, typer.Option(help="Only this skill's outcomes.")] = None,
    evaluator: Annotated[str | None, typer.Option(help="Only this evaluator's.")] = None,
) -> None:
    """Write the labelled outcomes (human, downstream, Stage 2) as JSONL, oldest first.

    Exits 1 with one line when Redis does not answer (before writing anything).
    """
    from workers.connections import redis_client
    from workers.fleet.deps import build_records

    settings = settings_or_exit()
    client = redis_client(settings, max_connections=2)
    count = 0
    try:
        client.ping()  # no Redis: one line and exit 1, and no empty --out file left behind
        outcomes = build_records(client, settings).outcomes
        with Path(out).open("w", encoding="utf-8") if out else nullcontext(sys.stdout) as sink:
            for outcome in outcomes.export(skill=skill, evaluator=evaluator):
                sink.write(outcome.model_dump_json() + "\n")
                count += 1
    finally:
        client.close()
    typer.echo(f"{count} outcome(s)", err=True)


@outcomes.command("report", cls=Command)
def report(
    dag_id: Annotated[str, typer.Argument(help="The DAG run.")],
    node_id: Annotated[str, typer.Argument(help="The node whose output was consumed.")],
    attempt: Annotated[int, typer.Argument(min=1, help="The attempt consumed.")],
    score: Annotated[float, typer.Argument(min=0.0, max=1.0, help="How usable it was, 0-1.")],
    reporter: Annotated[str, typer.Option(help="Who reports: the consuming node or system.")],
) -> None:
    """Record a downstream consumer's later verdict on an attempt, as a labelled outcome.

    Exits 1 when the fleet no longer remembers the attempt (expired, or never reviewed).
    """
    from workers.client import ReviewClient

    settings = settings_or_exit()
    client = ReviewClient(settings)
    try:
        known = client.report_downstream(dag_id, node_id, attempt, score, reporter=reporter)
    finally:
        client.close()
    key = review_key(dag_id, node_id, attempt)
    if not known:
        raise fail(f"{key}: the fleet remembers no such attempt (expired or never reviewed)", 1)
    typer.echo(f"{key}: recorded {score:g} from downstream:{reporter}")


def register(app: typer.Typer) -> None:
    """Add these commands to ``windags-eval``."""
    app.command("review-ui", cls=Command)(review_ui)
    app.command("verdict", cls=Command)(verdict)
    app.add_typer(outcomes, name="outcomes")
