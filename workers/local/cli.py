"""``windags-eval``: review one request in-process, or run and watch the fleet."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from workers.errors import ConfigurationError, InvalidRequest
from workers.intake import decode_request
from workers.local.calibration_cli import register as register_calibration_command
from workers.local.human_cli import register as register_human_commands
from workers.settings import Settings
from workers.settings import load_settings as read_settings

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Review agent-DAG node outputs: in this process, or through a worker fleet.",
)
register_human_commands(app)
register_calibration_command(app)


@app.callback()
def _root() -> None:
    """Review agent-DAG node outputs: in-process, or through the worker fleet."""


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def load_settings() -> Settings:
    """Settings from the environment; a bad value ends the command in one line naming it."""
    try:
        return read_settings()
    except ConfigurationError as exc:
        raise _fail(f"bad settings: {exc}") from None


def read_input(path: str) -> bytes:
    """The bytes of ``path``, or of stdin for ``-``."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise _fail(f"cannot read {path}: {exc.strerror}") from None


@app.command()
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
    exit 0 when every line was reviewed, 1 when some were not requests.
    """
    from workers.local.submit import InputError, read_json
    from workers.review import Reviewer

    settings = load_settings()
    if jsonl:
        from workers.local.batch_run import run_batch

        raise typer.Exit(run_batch(read_input(request_file), Reviewer(settings), settings, out))
    raw = read_input(request_file)
    try:
        read_json(request_file, raw, max_bytes=settings.max_request_bytes)
        request = decode_request(
            raw,
            max_request_bytes=settings.max_request_bytes,
            max_output_chars=settings.max_output_chars,
        )
    except InputError as exc:
        raise _fail(str(exc)) from None
    except InvalidRequest as exc:
        raise _fail(f"{request_file}: invalid request: {exc}") from None
    typer.echo(Reviewer(settings)(request).model_dump_json(indent=2))


def main() -> None:
    """Console-script entry point."""
    app()


@app.command()
def demo(
    timeout_s: Annotated[float, typer.Option(help="Give up waiting after this long.")] = 180.0,
    ui: Annotated[
        bool, typer.Option("--ui", help="Then keep the fleet and the review page running.")
    ] = False,
    ui_port: Annotated[int, typer.Option(help="The review page's port, with --ui.")] = 8400,
) -> None:
    """Start a local fleet, review the shipped 14-node sample DAG, print the results.

    With --ui, the fleet and the review page keep running (the escalated nodes wait
    there for a person) until Ctrl-C.
    """
    from workers.errors import FleetError
    from workers.local.demo import run_demo, wide_console

    try:
        code = run_demo(
            load_settings(),
            wide_console(),
            timeout_s=timeout_s,
            ui_port=ui_port if ui else None,
            private_redis=not redis_configured(),
        )
    except FleetError as exc:
        raise _fail(str(exc), 1) from None
    raise typer.Exit(code)


@app.command()
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
        raise _fail(str(exc), 1) from None
    except KeyboardInterrupt:
        typer.echo("stopped")


def redis_configured() -> bool:
    """Whether the operator chose a Redis: then a fleet never swaps in a private one."""
    return bool(os.environ.get("WINDAGS_REDIS_URL"))


@app.command()
def submit(
    files: Annotated[list[str], typer.Argument(help="Request files: one request or a list each.")],
) -> None:
    """Validate and enqueue review requests; prints each review key.

    A request already reviewed (its result is on the stream) is not enqueued again; stderr
    says so. Exits 2 on input that is not a valid request (one line naming the file, list
    index and field), 1 when the broker does not answer within the client's bound.
    """
    from workers.errors import BrokerUnavailableError
    from workers.local.submit import read_json, requests_in, submit_requests

    settings = load_settings()
    requests = []
    for name in files:
        try:
            body = read_json(name, read_input(name), max_bytes=100 * settings.max_request_bytes)
            requests.extend(requests_in(name, body, settings))
        except InvalidRequest as exc:
            raise _fail(str(exc)) from None
    try:
        submitted = submit_requests(settings, requests)
    except BrokerUnavailableError as exc:
        raise _fail(str(exc), 1) from None
    for key in submitted.already_reviewed:
        typer.echo(f"{key}: already reviewed (its result is on the stream); not enqueued", err=True)
    for key in submitted.enqueued:
        typer.echo(key)


@app.command()
def watch(
    dag_id: Annotated[str, typer.Argument(help="The DAG whose results to tail.")],
    from_start: Annotated[bool, typer.Option(help="Show earlier results too.")] = False,
) -> None:
    """Tail a DAG's results stream until Ctrl-C: one header, then one row per entry.

    Results, errors, and a person's verdicts with the decisions recomputed from them.
    """
    import redis

    from workers.connections import redis_client
    from workers.local.console import watch_header, watch_row
    from workers.local.demo import wide_console
    from workers.results.stream import read_after

    settings = load_settings()
    console = wide_console()
    client = redis_client(settings, max_connections=2)
    last = "0-0" if from_start else "$"
    console.print(watch_header())
    try:
        while True:
            entries = read_after(client, settings.keys.results(dag_id), last, block_ms=1000)
            if entries:
                last = entries[-1].entry_id
                for entry in entries:
                    console.print(watch_row(entry.payload))
    except KeyboardInterrupt:
        pass
    except redis.RedisError as exc:
        raise _fail(f"redis at {settings.redis_url}: {exc}", 1) from None
    finally:
        client.close()


if __name__ == "__main__":
    main()
