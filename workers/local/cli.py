"""``windags-eval``: review one request in-process, or run and watch the fleet."""

from __future__ import annotations

from typing import Annotated

import typer

from workers.errors import InvalidRequest
from workers.intake import decode_request
from workers.local import cli_support
from workers.local.calibration_cli import register as register_calibration_command
from workers.local.cli_help import Command
from workers.local.cli_help import app as plain_app
from workers.local.cli_support import fail, interruptible, read_input, redis_configured
from workers.local.dag_cli import register as register_dag_commands
from workers.local.human_cli import register as register_human_commands
from workers.local.watch_cli import register as register_watch_command
from workers.settings import Settings

app = plain_app(
    no_args_is_help=True,
    help="Review agent-DAG node outputs: in this process, or through a worker fleet.",
)
register_human_commands(app)
register_calibration_command(app)
register_dag_commands(app)
register_watch_command(app)


@app.callback()
def _root() -> None:
    """Review agent-DAG node outputs: in-process, or through the worker fleet."""


def load_settings() -> Settings:
    """Settings from the environment; a bad value ends the command in one line naming it."""
    return cli_support.settings_or_exit()


@app.command(cls=Command)
def review(
    request_file: Annotated[
        str, typer.Argument(help="A ReviewRequest JSON file (with --jsonl: one per line), or -.")
    ],
    jsonl: Annotated[
        bool, typer.Option("--jsonl", help="Review every line; labelled lines get recall.")
    ] = False,
    out: Annotated[
        str | None, typer.Option(help="With --jsonl: write result lines here, not stdout.")
    ] = None,
) -> None:
    """Run the whole two-stage review in this process and print the ReviewResult as JSON.

    Exits 0 on a completed review whatever its verdict, 2 on an invalid request. With
    --jsonl, each line is a request or {"expect": accept|reject|floor, "request": {...}};
    results (or typed errors) go out one per line, progress and a summary to stderr;
    exit 0 when every line was reviewed, 1 when some were not requests, 2 when the file
    holds no line at all.
    """
    from workers.local.submit import InputError, read_json
    from workers.review import Reviewer

    settings = load_settings()
    if jsonl:
        from workers.local.batch_run import EmptyBatchError, run_batch

        data = read_input(request_file)
        try:
            with interruptible():
                code = run_batch(data, Reviewer(settings), settings, out, name=request_file)
        except EmptyBatchError as exc:
            raise fail(str(exc)) from None
        raise typer.Exit(code)
    raw = read_input(request_file)
    try:
        read_json(request_file, raw, max_bytes=settings.max_request_bytes)
        request = decode_request(
            raw,
            max_request_bytes=settings.max_request_bytes,
            max_output_chars=settings.max_output_chars,
        )
    except InputError as exc:
        raise fail(str(exc)) from None
    except InvalidRequest as exc:
        raise fail(f"{request_file}: invalid request: {exc}") from None
    typer.echo(Reviewer(settings)(request).model_dump_json(indent=2))


def main() -> None:
    """Console-script entry point: a Redis that does not answer is one line and exit 1."""
    cli_support.run(app)


@app.command(cls=Command)
def demo(
    timeout_s: Annotated[float, typer.Option(help="Give up waiting after this long.")] = 180.0,
    ui: Annotated[
        bool, typer.Option("--ui", help="Then keep the fleet and the review page running.")
    ] = False,
    ui_port: Annotated[int, typer.Option(help="The review page's port, with --ui.")] = 8400,
) -> None:
    """Start a local fleet, review the shipped 14-node sample DAG, print the results.

    With --ui, the fleet and the review page keep running (the escalated nodes wait
    there for a person) until Ctrl-C. Ctrl-C at any time stops the fleet, removes its
    temporary folders and says "interrupted" (exit 130).
    """
    from workers.errors import FleetError
    from workers.local.demo import run_demo, wide_console

    try:
        with interruptible():
            code = run_demo(
                load_settings(),
                wide_console(),
                timeout_s=timeout_s,
                ui_port=ui_port if ui else None,
                private_redis=not redis_configured(),
            )
    except FleetError as exc:
        raise fail(str(exc), 1) from None
    raise typer.Exit(code)


@app.command(cls=Command)
def fleet() -> None:
    """Run a local fleet (one worker per queue) until Ctrl-C.

    Uses the Redis at WINDAGS_REDIS_URL, and fails when it does not answer; with the
    variable unset, uses 127.0.0.1:6379 or starts a private redis-server. A worker that
    exits on its own is restarted with backoff, and says so on stderr.
    """
    import time

    from workers.errors import FleetError
    from workers.local.launcher import LocalFleet

    settings = load_settings()
    try:
        with LocalFleet(
            settings.redis_url,
            start_private_redis=not redis_configured(),
            on_restart=lambda r: typer.echo(r.describe(), err=True),
        ) as running:
            if running.private is not None:
                typer.echo(f"no Redis at {settings.redis_url}; started a private one")
            running.wait_ready()
            typer.echo(
                f"fleet ready on {running.redis_url}; logs in {running.log_dir} (removed on "
                "exit unless a worker failed). Ctrl-C stops."
            )
            while True:
                time.sleep(1)
    except FleetError as exc:
        raise fail(str(exc), 1) from None
    except KeyboardInterrupt:
        typer.echo("stopped")


@app.command(cls=Command)
def submit(
    files: Annotated[
        list[str], typer.Argument(metavar="FILE", help="Request files: one request or a list each.")
    ],
) -> None:
    """Validate and enqueue review requests; prints each review key.

    A request already reviewed (its result is on the stream) is not enqueued again; stderr
    says so. Exits 2 on input that is not a valid request (one line naming the file, list
    index and field) or holds none (an empty list), 1 when Redis does not answer within
    the bound docs/explanation/reliability.md states.
    """
    from workers.local.submit import read_json, requests_in, submit_requests

    settings = load_settings()
    requests = []
    for name in files:
        try:
            body = read_json(name, read_input(name), max_bytes=100 * settings.max_request_bytes)
            requests.extend(requests_in(name, body, settings))
        except InvalidRequest as exc:
            raise fail(str(exc)) from None
    submitted = submit_requests(settings, requests)  # a broker fault: one line, exit 1
    for key in submitted.already_reviewed:
        typer.echo(f"{key}: already reviewed (its result is on the stream); not enqueued", err=True)
    for key in submitted.enqueued:
        typer.echo(key)


if __name__ == "__main__":
    main()
