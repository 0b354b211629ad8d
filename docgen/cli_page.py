"""docs/reference/cli.md: every ``windags-eval`` command and option, from the Typer app.

The page is what ``--help`` says, command by command: the usage line, the docstring and each
argument's and option's help record, read from the click command Typer builds, so a command
or option added to the CLI is on the page after the next run.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import typer
import typer.main
from typer.core import TyperGroup

from docgen.markdown import NOTICE, code, table
from workers.local.cli import app

PAGE = "reference/cli.md"
PROGRAM = "windags-eval"


def commands() -> Iterator[tuple[typer.Context, str]]:
    """Every command below the root, depth first, in the order ``--help`` lists them."""
    root = typer.main.get_command(app)
    yield from _below(typer.Context(root, info_name=PROGRAM))


def _below(ctx: typer.Context) -> Iterator[tuple[typer.Context, str]]:
    group = ctx.command
    if not isinstance(group, TyperGroup):
        return
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = typer.Context(command, info_name=name, parent=ctx)
        yield sub, name
        yield from _below(sub)


def section(ctx: typer.Context) -> list[str]:
    """One command's heading, usage, help text and parameters."""
    command = ctx.command
    usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    lines = [f"## {ctx.command_path}", "", "```text", usage, "```", ""]
    lines += [inspect.cleandoc(command.help or ""), ""]
    records = [
        record
        for param in command.get_params(ctx)
        if (record := param.get_help_record(ctx)) is not None and record[0] != "--help"
    ]
    if records:
        lines += [*table(("argument or option", "meaning"), _rows(records)), ""]
    return lines


def _rows(records: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(code(names), meaning) for names, meaning in records]


def render() -> str:
    """The whole page."""
    found = list(commands())
    index = [f"- [{code(ctx.command_path)}](#{_anchor(ctx.command_path)})" for ctx, _ in found]
    lines = [
        NOTICE,
        f"# The `{PROGRAM}` command",
        "",
        f"`{PROGRAM}` is installed with the package (`pip install -e .`, or `make demo`). Every",
        "command reads its settings from `WINDAGS_*` variables ([settings](settings.md)) when it",
        "starts, and a bad one ends it in one line naming the variable. A Redis that does not",
        "answer ends a command in one line and exit 1.",
        "",
        *index,
        "",
    ]
    for ctx, _ in found:
        lines += section(ctx)
    return "\n".join(lines).rstrip("\n") + "\n"


def _anchor(heading: str) -> str:
    """The anchor MyST gives a heading (lower case, words joined by hyphens)."""
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -_")
    return "-".join(kept.split())
