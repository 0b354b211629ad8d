"""``sqlglot-fixtures``: SQL statements from sqlglot's test fixtures (MIT).

They ship in the ``sqlglot`` source distribution (``tests/fixtures``); the sdist of the
installed version is fetched once with pip and read in place. Files: ``identity.sql``
(one statement per line) and ``pretty.sql`` plus ``optimizer/**/*.sql`` (pairs of input
and expected output; the input is used), read the way sqlglot's own test helpers read
them. ``qualify_columns__invalid.sql`` is left out: its statements are wrong only against
catalogs its test code builds. The TPC-H and TPC-DS queries are reviewed with their
catalog (``TPCH_SCHEMA`` / ``TPCDS_SCHEMA`` of sqlglot's ``tests/helpers.py``, read as
literals) in the contract, and get the ``unknown_column`` defect too.

Good case: the statement (expect accept). Defect cases: each operator of
:mod:`bench.public.sql_mutations`. Left out and counted: fixtures tagged with a
non-default dialect or that the default dialect cannot parse, and bare expressions
(``x + 1``: a node that promised SQL returns statements). Files are taken round-robin so a
small ``limit`` still spans them. The id is ``fixture_file/statement_index``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from sqlglot import exp

from bench.public.archives import DataUnavailable, fetch, installed_version, read_tree
from bench.public.case import GOOD, Expect, Loaded, case, interleave, make_request
from bench.public.heldout import is_held_out
from bench.public.sql_mutations import (
    EXPECT,
    OPERATORS,
    Catalog,
    SqlDefect,
    parse_statement,
    unknown_column,
)

BENCHMARK = "sqlglot-fixtures"
PREFIX = "tests/fixtures/"
LEFT_OUT = ("__invalid",)
HELPERS = "tests/helpers.py"
#: Fixture files whose statements read a catalog that ``tests/helpers.py`` declares.
CATALOG_OF = {
    "optimizer/tpc-h/tpc-h.sql": "TPCH_SCHEMA",
    "optimizer/tpc-ds/tpc-ds.sql": "TPCDS_SCHEMA",
}
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
    tree = read_tree(archive, "tests/")
    catalogs = _catalogs(tree.get(HELPERS, b"").decode("utf-8"))
    files = {
        name.removeprefix(PREFIX): raw.decode("utf-8")
        for name, raw in tree.items()
        if name.startswith(PREFIX)
        and name.endswith(".sql")
        and not any(tag in name for tag in LEFT_OUT)
    }
    statements = 0
    for item_id, sql, meta in interleave(_statements(n, t) for n, t in sorted(files.items())):
        if is_held_out(BENCHMARK, item_id):
            loaded.held_out += 1
            continue
        if limit is not None and statements >= limit:
            break
        if _add(loaded, item_id, sql, meta, catalogs.get(item_id.rsplit("/", 1)[0])):
            statements += 1
    return loaded


def _add(
    loaded: Loaded, item_id: str, sql: str, meta: dict[str, str], catalog: Catalog | None
) -> bool:
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
    if catalog is not None:
        mutated = unknown_column(sql, tree, catalog)
        if mutated is None:
            loaded.skip(f"{SqlDefect.UNKNOWN_COLUMN} does not apply")
        else:
            outputs.append((SqlDefect.UNKNOWN_COLUMN.value, Expect.FLOOR, mutated))
    for label, expect, content in outputs:
        request = make_request(
            benchmark=BENCHMARK,
            item_id=item_id,
            label=label,
            kind="sql",
            content=content,
            skill="sql-query-writer",
            contract={"catalog": catalog} if catalog else None,
        )
        loaded.cases.append(case(BENCHMARK, item_id, expect, label, request))
    return True


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


def _catalogs(helpers: str) -> dict[str, Catalog]:
    """The TPC-H and TPC-DS catalogs of sqlglot's test helpers, read as literals (never run)."""
    wanted = {name: fixture for fixture, name in CATALOG_OF.items()}
    found: dict[str, Catalog] = {}
    for node in ast.parse(helpers).body if helpers else []:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", "")
            if name in wanted:
                found[wanted[name]] = ast.literal_eval(node.value)
    return found


def _meta(sql: str) -> tuple[str, dict[str, str]]:
    meta: dict[str, str] = {}
    lines = sql.split("\n")
    while lines and lines[0].startswith("#") and ":" in lines[0]:
        key, value = lines.pop(0).split(":", maxsplit=1)
        meta[key.lstrip("#").strip()] = value.strip()
    return "\n".join(lines), meta
