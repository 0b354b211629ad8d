"""``windags-eval watch``: tail a DAG's results stream, one row per entry."""

from __future__ import annotations

from typing import Annotated

import typer

from workers.local.cli_help import Command
from workers.local.cli_support import fail, settings_or_exit


def watch(
    dag_id: Annotated[str, typer.Argument(help="The DAG whose results to tail.")],
    from_start: Annotated[bool, typer.Option(help="Show earlier results too.")] = False,
) -> None:
    """Tail a DAG's results stream until Ctrl-C: one header, then one row per entry.

    Results, errors, and a person's verdicts with the decisions recomputed from them.
    Exits 1 without a header when Redis does not answer, and when the DAG's results are
    under the demo's key prefix instead of this one (saying the command that shows them).
    """
    from workers.connections import redis_client
    from workers.local.console import watch_header, watch_row
    from workers.local.demo import wide_console
    from workers.local.demo_keys import demo_settings
    from workers.results.stream import read_after

    settings = settings_or_exit()
    console = wide_console()
    client = redis_client(settings, max_connections=2)
    stream = settings.keys.results(dag_id)
    try:
        demo = demo_settings(settings)
        mine, demos = client.exists(stream), client.exists(demo.keys.results(dag_id))
        if not mine and demos:
            raise fail(
                f"DAG {dag_id} has no results under the key prefix {settings.key_prefix}, "
                f"only under the demo's; to see them: WINDAGS_KEY_PREFIX={demo.key_prefix} "
                f"windags-eval watch {dag_id} --from-start",
                1,
            )
        last = "0-0" if from_start else "$"
        console.print(watch_header())
        while True:
            entries = read_after(client, stream, last, block_ms=1000)
            if entries:
                last = entries[-1].entry_id
                for entry in entries:
                    console.print(watch_row(entry.payload))
    except KeyboardInterrupt:
        pass
    finally:
        client.close()


def register(app: typer.Typer) -> None:
    """Add ``watch`` to the ``windags-eval`` app."""
    app.command("watch", cls=Command)(watch)
