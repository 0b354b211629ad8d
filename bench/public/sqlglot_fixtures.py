"""``sqlglot-fixtures``: SQL statements from sqlglot's test fixtures (MIT).

They ship in the ``sqlglot`` source distribution (``tests/fixtures``); the sdist of the
installed version is fetched once with pip and read in place. Files: ``identity.sql``
(one statement per line) and ``pretty.sql`` plus ``optimizer/**/*.sql`` (pairs of input
and expected output; the input is used), read the way sqlglot's own test helpers read
them. ``qualify_columns__invalid.sql`` is left out: its statements are wrong only against
a catalog, which the request cannot carry yet.

Good case: the statement (expect accept). Defect cases: each operator of
:mod:`bench.public.sql_mutations`. Left out and counted: fixtures tagged with a
non-default dialect or that the default dialect cannot parse, and bare expressions
(``x + 1``: a node that promised SQL returns statements). Files are taken round-robin so a
small ``limit`` still spans them. The id is ``fixture_file/statement_index``.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from bench.public.archives import DataUnavailable, fetch, installed_version, read_tree
from bench.public.case import GOOD, Expect, Loaded, case, make_request
from bench.public.heldout import is_held_out
from bench.public.sql_mutations import EXPECT, OPERATORS, parse_statement

BENCHMARK = "sqlglot-fixtures"
PREFIX = "tests/fixtures/"
LEFT_OUT = ("__invalid",)
STATEMENTS = (exp.Query, exp.DML, exp.DDL, exp.Command, exp.Set, exp.Use, exp.Describe)
STATEMENTS_TX = (exp.Transaction, exp.Commit, exp.Rollback, exp.Merge)


def load(limit: int | None = None) -> Loaded:
    """Good and mutated cases of at most ``limit`` statements."""
    loaded = Loaded(BENCHMARK)
    try:
        archive = fetch("sqlglot", installed_version("sqlglot"), sdist=True)
    except DataUnavailable as exc:
        loaded.unavailable = str(exc)
        return loaded
    files = {
        name.removeprefix(PREFIX): raw.decode("utf-8")
        for name, raw in read_tree(archive, PREFIX).items()
        if name.endswith(".sql") and not any(tag in name for tag in LEFT_OUT)
    }
    statements = 0
    for item_id, sql, meta in _round_robin(files):
        if is_held_out(BENCHMARK, item_id):
            loaded.held_out += 1
            continue
        if limit is not None and statements >= limit:
            break
        if _add(loaded, item_id, sql, meta):
            statements += 1
    return loaded


def _add(loaded: Loaded, item_id: str, sql: str, meta: dict[str, str]) -> bool:
    if meta.get("dialect"):
        loaded.skip("tagged with a non-default dialect")
        return False
    tree = parse_statement(sql)
    if tree is None:
        loaded.skip("the default dialect cannot parse it")
        return False
    if not isinstance(tree, STATEMENTS + STATEMENTS_TX):
        loaded.skip("a bare expression, not a statement")
        return False
    outputs = [(GOOD, Expect.ACCEPT, sql)]
    for defect, operator in OPERATORS.items():
        mutated = operator(sql, tree)
        if mutated is None:
            loaded.skip(f"{defect} does not apply")
            continue
        outputs.append((defect.value, EXPECT[defect], mutated))
    for label, expect, content in outputs:
        request = make_request(
            benchmark=BENCHMARK,
            item_id=item_id,
            label=label,
            kind="sql",
            content=content,
            skill="sql-query-writer",
        )
        loaded.cases.append(case(BENCHMARK, item_id, expect, label, request))
    return True


def _round_robin(files: dict[str, str]) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(id, sql, meta) taking one statement of each file in turn."""
    streams = [_statements(name, text) for name, text in sorted(files.items())]
    while streams:
        for stream in list(streams):
            item = next(stream, None)
            if item is None:
                streams.remove(stream)
            else:
                yield item


def _statements(name: str, text: str) -> Iterator[tuple[str, str, dict[str, str]]]:
    """What sqlglot's test helpers read: lines of identity.sql, inputs of the pair files."""
    lines = [line for line in text.splitlines() if line and not line.startswith("--")]
    if name == "identity.sql":
        pieces = [line for line in lines if not line.startswith("#")]
    else:
        parts = "\n".join(lines).split(";")
        pieces = [parts[i] for i in range(0, len(parts) - 1, 2)]
    for index, piece in enumerate(pieces):
        sql, meta = _meta(piece.strip())
        yield f"{name}/{index}", sql, meta


def _meta(sql: str) -> tuple[str, dict[str, str]]:
    meta: dict[str, str] = {}
    lines = sql.split("\n")
    while lines and lines[0].startswith("#") and ":" in lines[0]:
        key, value = lines.pop(0).split(":", maxsplit=1)
        meta[key.lstrip("#").strip()] = value.strip()
    return "\n".join(lines), meta
