"""How often the self-consistency checks trip on real text no one here wrote.

Run: ``python -m bench.consistency_rate [--sources a,b] [--show N]``.

For each source of ``bench/consistency_texts.py`` (HaluEval's right answers, summaries
and responses; CPython's and the installed packages' docstrings; the installed packages'
READMEs), and for the good statements of sqlglot's fixtures, prints how many texts the
new checks trip, on the dev half and the test half side by side:

- ``self``: ``self_consistency.self_contradictions`` (opposite statements about one
  subject, a universal claim a count denies, counts the listed items deny, totals);
- ``prose``: every consistency check on prose (``check_consistency``), for reference;
- for SQL, ``alias``: a select list that names two columns alike (``sql_aliases``).

Every text is good, so every trip is a false one. ``--show N`` prints up to N tripped
texts' findings, from the dev half only: the test half is counted, never shown.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from bench.consistency_texts import SOURCES, in_dev_half, texts
from bench.public import sqlglot_fixtures
from bench.public.case import GOOD
from schemas.request import NodeOutput, OutputKind
from workers.evaluate.floor.sql_aliases import duplicate_aliases
from workers.evaluate.parsed import ParseFailure, sql_statements
from workers.evaluate.wall.consistency import check_consistency
from workers.evaluate.wall.self_consistency import self_contradictions

SQL = "sqlglot-fixtures"


@dataclass
class Half:
    """Texts read and texts tripped, per check."""

    texts: int = 0
    tripped: dict[str, int] = field(default_factory=dict)

    def rate(self, check: str) -> str:
        hits = self.tripped.get(check, 0)
        return f"{hits}/{self.texts} = {hits / self.texts:.4f}" if self.texts else "-"


def _prose_checks(content: str, markdown: bool) -> dict[str, list[str]]:
    kind = OutputKind.MARKDOWN if markdown else OutputKind.TEXT
    prose = check_consistency(NodeOutput(kind=kind, content=content))
    return {
        "self": [f.issue.message for f in self_contradictions(content)],
        "prose": [f.issue.message for f in prose],
    }


def _alias_check(content: str) -> dict[str, list[str]]:
    statements = sql_statements(content)
    if isinstance(statements, ParseFailure):
        return {"alias": []}
    return {
        "alias": [
            v.message
            for statement in statements
            for select in statement.find_all(exp.Select)
            for v in duplicate_aliases(select)
            if "columns" in v.message
        ]
    }


def _sql_texts() -> list[tuple[str, bool, str]]:
    loaded = sqlglot_fixtures.load(None)
    return [
        (c.id, in_dev_half(SQL, c.id), str(c.request["output"]["content"]))
        for c in loaded.cases
        if c.label == GOOD
    ]


def _items(source: str) -> list[tuple[str, bool, str, bool]]:
    """(item id, in the dev half, content, is markdown) of every text of ``source``."""
    if source == SQL:
        return [(i, d, c, False) for i, d, c in _sql_texts()]
    return [(t.item_id, t.dev, t.content, t.markdown) for t in texts(source, dev_only=False)]


def measure(source: str, show: int) -> tuple[Half, Half]:
    """(dev, test) counts for ``source``; prints up to ``show`` dev trips."""
    dev, test = Half(), Half()
    for item_id, is_dev, content, markdown in _items(source):
        half = dev if is_dev else test
        half.texts += 1
        found = _alias_check(content) if source == SQL else _prose_checks(content, markdown)
        for check, messages in found.items():
            if messages:
                half.tripped[check] = half.tripped.get(check, 0) + 1
                if is_dev and check != "prose" and show > 0:
                    show -= 1
                    print(f"  dev {source} {item_id}: {messages}")
    return dev, test


def main(argv: Sequence[str] | None = None) -> int:
    """Print the trip rates per source, dev and test half."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sources", default=",".join((*SOURCES, SQL)))
    parser.add_argument("--show", type=int, default=0, help="dev-half trips to print")
    args = parser.parse_args(argv)
    rows = []
    for source in (s.strip() for s in args.sources.split(",") if s.strip()):
        dev, test = measure(source, args.show)
        for check in ("alias",) if source == SQL else ("self", "prose"):
            rows.append((source, check, dev.rate(check), test.rate(check)))
    rows.insert(0, ("source", "check", "dev (tripped/texts)", "test (tripped/texts)"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
