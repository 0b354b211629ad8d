"""How ``windags-eval --help`` reads: as Unix help does, nothing that looks like a value.

Typer's rich help prints a type beside every option, flags included (``--accept <bool>``,
``--help <bool>``, as if each took a value), and puts a required argument in braces on the
usage line (``{dag_id}``). Every ``windags-eval`` command is a ``Command``, on an ``app``
made here: plain help (flags with no type, options with the type of their value), and
``DAG_ID`` on the usage line.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand


class Command(TyperCommand):
    """A command whose usage line names its arguments in capitals, brackets when optional."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:  # DAG_ID in the usage, the help and the errors alike
            if isinstance(param, TyperArgument) and param.metavar is None:
                param.metavar = (param.name or "arg").upper()

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS] DAG_ID NODE_ID ATTEMPT``: click's own convention.

        ``ctx`` is the click context of typer's bundled click (typed loosely: typer does
        not export that module).
        """
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if not isinstance(param, TyperArgument):
                continue
            name = param.metavar or (param.name or "arg").upper()
            if param.nargs != 1:
                name += "..."
            pieces.append(name if param.required else f"[{name}]")
        return pieces


def app(**options: Any) -> typer.Typer:
    """A Typer app (or sub-app) with plain help; register its commands with ``cls=Command``.

    An unexpected error prints Python's own traceback, not typer's rich one with every
    frame's local variables (settings, URLs with passwords) in it.
    """
    return typer.Typer(
        add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False, **options
    )
