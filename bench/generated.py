"""Pages the project writes from measured figures or from its own code, kept current by tests.

Each generator renders its page, then either writes it or, with ``--check``, reports
whether the file on disk is what it would write (a test runs the check, so a stale page
fails the suite instead of misleading a reader).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def write_or_check(
    path: Path, render: Callable[[str], str], command: str, argv: Sequence[str] | None
) -> int:
    """Write ``render(current text)`` to ``path``, or with ``--check`` exit 1 when it differs.

    ``render`` gets the file's current text ('' when missing), for pages that replace
    only a block of a longer file; ``command`` is what a reader runs to rewrite it.
    """
    parser = argparse.ArgumentParser(description=f"Write {path.name} ({command})")
    parser.add_argument("--check", action="store_true", help=f"exit 1 if {path.name} is stale")
    args = parser.parse_args(argv)
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    page = render(current)
    if args.check:
        if page != current:
            print(f"{path.name} is stale: run {command}", file=sys.stderr)
            return 1
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    print(f"wrote {path}")
    return 0
