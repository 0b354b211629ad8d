"""The human gate's commands: ``review-ui``, ``verdict``, ``outcomes export|report``."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Annotated

import typer

from schemas.human import VerdictAction, VerdictInput
from schemas.quality import Dimension
from workers.errors import ConfigurationError
from workers.settings import Settings, load_settings

outcomes = typer.Typer(add_completion=False, no_args_is_help=True, help="Labelled outcomes.")


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _settings() -> Settings:
    try:
        return load_settings()
    except ConfigurationError as exc:
        raise _fail(f"bad settings: {exc}") from None


def review_ui(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8400,
) -> None:
    """Serve the review page for the human gate until Ctrl-C.

    Needs WINDAGS_REVIEW_UI_TOKEN (reviewers sign in with it and a name) or
    WINDAGS_REVIEW_UI_AUTH_HEADER (an authenticating proxy's user header).
    """
    from workers.local.review_page import serve

    try:
        serve(_settings(), host=host, port=port)
    except ConfigurationError as exc:
        raise _fail(str(exc)) from None


def _scores(pairs: list[str]) -> dict[Dimension, float]:
    scores: dict[Dimension, float] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        try:
            scores[Dimension(name.strip())] = float(value)
        except ValueError:
            known = ", ".join(d.value for d in Dimension)
            raise _fail(f"--score {pair!r}: want DIM=0.x with DIM one of {known}") from None
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
        list[str] | None, typer.Option(help="A dimension's score, DIM=0.x; repeatable.")
    ] = None,
    comment: Annotated[str | None, typer.Option(help="A note for the record.")] = None,
    reviewer: Annotated[str | None, typer.Option(help="Who judges (default: $USER).")] = None,
) -> None:
    """Record a person's verdict on an escalated attempt, exactly once.

    Prints the decision recomputed with it (JSON); exits 1 when the attempt was already
    decided, is claimed by another reviewer, or does not wait for a person.
    """
    from pydantic import ValidationError

    from workers.client import ReviewClient
    from workers.human import VerdictRefusedError

    chosen = [a for a, on in zip(VerdictAction, (accept, reject, send_back), strict=True) if on]
    if len(chosen) != 1:
        raise _fail("give exactly one of --accept, --reject, --send-back")
    settings = _settings()
    try:
        given = VerdictInput(
            action=chosen[0], scores=_scores(score or []), feedback=feedback, comment=comment
        )
    except ValidationError as exc:
        raise _fail(str(exc.errors(include_url=False)[0]["msg"])) from None
    client = ReviewClient(settings)
    try:
        done = client.record_verdict(
            dag_id, node_id, attempt, given, reviewer=reviewer or getpass.getuser()
        )
    except VerdictRefusedError as exc:
        raise _fail(str(exc), 1) from None
    finally:
        client.close()
    assert done.decision is not None
    typer.echo(done.decision.model_dump_json(indent=2))
    typer.echo(f"recorded: entries {' '.join(done.entry_ids)}", err=True)


@outcomes.command("export")
def export(
    out: Annotated[str | None, typer.Option(help="Write JSONL here, not stdout.")] = None,
    skill: Annotated[str | None, typer.Option(help="Only this skill's outcomes.")] = None,
    evaluator: Annotated[str | None, typer.Option(help="Only this evaluator's.")] = None,
) -> None:
    """Write the labelled outcomes (human, downstream, Stage 2) as JSONL, oldest first."""
    from workers.connections import redis_client
    from workers.human import build_gate

    settings = _settings()
    client = redis_client(settings, max_connections=2)
    gate = build_gate(client, settings)
    sink = Path(out).open("w", encoding="utf-8") if out is not None else None
    count = 0
    try:
        for outcome in gate.outcomes.export(skill=skill, evaluator=evaluator):
            line = outcome.model_dump_json()
            if sink is None:
                typer.echo(line)
            else:
                sink.write(line + "\n")
            count += 1
    finally:
        client.close()
        if sink is not None:
            sink.close()
    typer.echo(f"{count} outcome(s)", err=True)


@outcomes.command("report")
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
    import redis

    from workers.client import ReviewClient

    settings = _settings()
    client = ReviewClient(settings)
    try:
        known = client.report_downstream(dag_id, node_id, attempt, score, reporter=reporter)
    except redis.RedisError as exc:
        raise _fail(f"redis at {settings.redis_url}: {exc}", 1) from None
    finally:
        client.close()
    key = f"{dag_id}:{node_id}:{attempt}"
    if not known:
        raise _fail(f"{key}: the fleet remembers no such attempt (expired or never reviewed)", 1)
    typer.echo(f"{key}: recorded {score:g} from downstream:{reporter}")


def register(app: typer.Typer) -> None:
    """Add these commands to ``windags-eval``."""
    app.command("review-ui")(review_ui)
    app.command("verdict")(verdict)
    app.add_typer(outcomes, name="outcomes")
