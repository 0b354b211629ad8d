"""``windags-eval dag``: register a DAG's shape, and show a DAG's progress."""

from __future__ import annotations

from typing import Annotated

import typer

from workers.local.cli_help import Command
from workers.local.cli_help import app as plain_app
from workers.local.cli_support import fail, interruptible, read_input, settings_or_exit

dag = plain_app(no_args_is_help=True, help="Registered DAGs: their shape, their progress.")


@dag.command("register", cls=Command)
def register_dag(
    shape_file: Annotated[str, typer.Argument(help="A DagShape JSON file, or -.")],
) -> None:
    """Register a DAG's shape, so that requests of it may omit their downstream list.

    The fleet then derives each such request's downstream from the shape: every
    transitive consumer, the cascade per hop, the critical path. A changed shape needs a
    higher version. Exits 2 on a shape that is not a valid DAG (one line naming the node
    or edge) or a version the stored one refuses, 1 when Redis does not answer.
    """
    from schemas.topology import MAX_DAG_BYTES
    from workers.connections import redis_client
    from workers.results.dags import DagRegistry
    from workers.topology import DagVersionError, InvalidDag, Topology, decode_dag

    settings = settings_or_exit()
    try:
        shape = decode_dag(read_input(shape_file), max_bytes=MAX_DAG_BYTES)
    except InvalidDag as exc:
        raise fail(f"{shape_file}: invalid DAG: {exc}") from None
    client = redis_client(settings, max_connections=2)
    try:
        registry = DagRegistry(client, settings.keys, ttl_s=settings.stream_retention_s)
        done = registry.register(shape)
    except DagVersionError as exc:
        raise fail(str(exc)) from None
    finally:
        client.close()
    topology = Topology(shape)
    path = [node for node in topology.ids if topology.is_critical(node)]
    typer.echo(
        f"{done.status.value}: DAG {shape.dag_id} version {done.version}, "
        f"{len(shape.nodes)} nodes, {len(shape.edges)} edges; critical path "
        f"{topology.critical_duration_s:g} s through {', '.join(path)}"
    )


@dag.command("show", cls=Command)
def show_dag(
    dag_id: Annotated[str, typer.Argument(help="The DAG to show.")],
    follow: Annotated[
        bool, typer.Option("--follow", help="Keep the view live until Ctrl-C.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the progress as JSON.")] = False,
) -> None:
    """Show every node of a DAG: state, latest attempt, decision, Stage 2, quality, spend.

    Then the DAG's totals (accepted, iterating, escalated, waiting for a person) and its
    spend against the registered budget. With --follow, the view is redrawn as results
    arrive on the DAG's stream. Exits 1 when the DAG has neither results nor a shape.
    """
    from rich.console import Group
    from rich.live import Live

    from workers.connections import redis_client
    from workers.local.dag_view import progress_table, totals_line
    from workers.local.demo import wide_console
    from workers.results.dags import DagRegistry
    from workers.results.progress import ProgressReader

    settings = settings_or_exit()
    client = redis_client(settings, max_connections=2)
    registry = DagRegistry(client, settings.keys, ttl_s=settings.stream_retention_s)
    reader = ProgressReader(client, settings.keys, registry)
    try:
        progress = reader.progress(dag_id)
        if not progress.nodes:
            raise fail(
                f"DAG {dag_id} has no results and no registered shape under the key prefix "
                f"{settings.key_prefix}",
                1,
            )
        if as_json:
            typer.echo(progress.model_dump_json(indent=2))
            return
        console = wide_console()
        view = Group(progress_table(progress), totals_line(progress))
        if not follow:
            console.print(view)
            return
        with interruptible(), Live(view, console=console, auto_refresh=False) as live:
            while True:
                progress = reader.progress(dag_id, block_ms=1000)
                live.update(Group(progress_table(progress), totals_line(progress)), refresh=True)
    finally:
        client.close()


def register(app: typer.Typer) -> None:
    """Add ``dag register`` and ``dag show`` to the ``windags-eval`` app."""
    app.add_typer(dag, name="dag")
