"""The public-data harness: held-out filter, labelled cases, mutations, report figures."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench import public_eval, readme_figures
from bench.public import LOADERS, Expect, halueval, is_held_out
from bench.public.case import Loaded
from bench.public.cpython_test import unbound_names
from bench.public.heldout import Half, half_of
from bench.public.py_mutations import OPERATORS as PY_OPERATORS
from bench.public.py_mutations import PyDefect, compiles
from bench.public.report import Outcome, reachable_within_bound
from bench.public.sql_mutations import OPERATORS as SQL_OPERATORS
from bench.public.sql_mutations import SqlDefect, parse_statement, unknown_column
from schemas.request import ReviewRequest
from tests.infrastructure import unavailable

SMALL = 4

_cache: dict[str, Loaded] = {}


def _loaded(name: str) -> Loaded:
    """A small sample; only missing data skips (a loader bug raises and fails)."""
    if name not in _cache:
        _cache[name] = LOADERS[name](SMALL)
    loaded = _cache[name]
    if loaded.unavailable:
        unavailable(f"{name} data: {loaded.unavailable}")
    return loaded


def test_held_out_rule_is_the_sha256_quarter() -> None:
    # sha256("humaneval:HumanEval/1") starts with 0-3, sha256("humaneval:HumanEval/0") with 6.
    assert is_held_out("humaneval", "HumanEval/1")
    assert not is_held_out("humaneval", "HumanEval/0")
    share = sum(is_held_out("x", str(i)) for i in range(4000)) / 4000
    assert 0.22 < share < 0.28


@pytest.mark.parametrize("name", list(LOADERS))
def test_every_source_yields_valid_labelled_cases_none_held_out(name: str) -> None:
    loaded = _loaded(name)
    assert loaded.cases
    # What a loader meets of the held-out quarter, and never reads: test_held_out_reads.
    for case in loaded.cases:
        assert case.benchmark == name
        assert not is_held_out(name, case.id), case.id
        assert case.label
        ReviewRequest.model_validate_json(json.dumps(case.request))
        line = json.loads(case.to_line())
        assert line["expect"] in {e.value for e in Expect}
        assert line["request"] == case.request


def test_a_known_held_out_task_is_never_built() -> None:
    loaded = _loaded("humaneval")
    ids = {case.id for case in loaded.cases}
    assert "HumanEval/0" in ids
    assert "HumanEval/1" not in ids
    assert loaded.held_out >= 1


def test_halueval_gives_a_right_and_a_hallucinated_case_with_sources() -> None:
    loaded = _loaded("halueval-qa")
    assert "6" not in {case.id for case in loaded.cases}  # line 6 is held out
    by_id: dict[str, set[str]] = {}
    for case in loaded.cases:
        by_id.setdefault(case.id, set()).add(case.expect.value)
        assert case.request["sources"] and case.request["task"]
    assert all(expects == {"accept", "reject"} for expects in by_id.values())


def test_halueval_declares_no_policy_unless_asked() -> None:
    names = ("halueval-qa", "halueval-summarization", "halueval-dialogue")
    # As a new user sends it: no policy declared.
    assert {c.request.get("grounding") for n in names for c in _loaded(n).cases} == {None}
    declared = {
        name: {c.request["grounding"] for c in halueval.load(name, SMALL, halueval.DECLARED).cases}
        for name in names
    }
    assert declared == {
        "halueval-qa": {"extractive"},
        "halueval-summarization": {"abstractive"},
        "halueval-dialogue": {"open"},
    }


@pytest.mark.parametrize("shape", list(halueval.Shape))
def test_halueval_shapes_carry_the_input_where_they_say(shape: halueval.Shape) -> None:
    loaded = halueval.load("halueval-summarization", SMALL, halueval.INFERRED, shape)
    if loaded.unavailable:
        unavailable(f"halueval data: {loaded.unavailable}")
    for case in loaded.cases:
        sources, task = case.request.get("sources") or [], case.request["task"]
        document = sources[0]["text"] if sources else None
        if shape is halueval.Shape.SOURCES:
            assert document and document not in task
        elif shape is halueval.Shape.TASK:
            assert not sources and len(task) > 200
        else:
            assert document and document in task


def test_the_dev_and_test_halves_split_the_tunable_items_evenly() -> None:
    halves = Counter(half_of("x", str(i)) for i in range(4000))
    assert 0.45 < halves[Half.DEV] / 4000 < 0.55
    # Independent of the held-out rule: both halves lose a quarter.
    held = Counter(half_of("x", str(i)) for i in range(4000) if is_held_out("x", str(i)))
    assert 0.4 < held[Half.DEV] / sum(held.values()) < 0.6


SOLUTION_PROMPT = 'import math\n\n\ndef area(r: float) -> float:\n    """Area of a circle."""\n'
SOLUTION = "    squared = r * r\n    return math.pi * squared\n"


def test_python_mutations_make_the_defect_they_name() -> None:
    made = {d: op(SOLUTION_PROMPT, SOLUTION, "area", 0) for d, op in PY_OPERATORS.items()}
    assert compiles(SOLUTION_PROMPT + SOLUTION)
    assert not compiles(made[PyDefect.TRUNCATED] or "")
    assert not compiles(made[PyDefect.RETURN_OUTSIDE_FUNCTION] or "")
    assert (made[PyDefect.STUB] or "").rstrip().endswith("pass")
    assert "squareds" in (made[PyDefect.UNBOUND_NAME] or "")
    hallucinated = made[PyDefect.HALLUCINATED_API] or ""
    assert "json.parse(" in hallucinated and compiles(hallucinated)


def test_unknown_column_leaves_the_catalog_and_the_query_behind() -> None:
    sql = "SELECT l_quantity FROM lineitem WHERE l_tax > 0"
    tree = parse_statement(sql)
    assert tree is not None
    catalog = {"lineitem": {"l_quantity": "double", "l_tax": "double"}}
    assert unknown_column(sql, tree, catalog) == "SELECT quantity FROM lineitem WHERE l_tax > 0"


def test_accept_snippets_from_cpython_tests_are_self_contained() -> None:
    assert unbound_names("f(x for x in L)\n") == {"f", "L"}
    assert unbound_names("import os\nos.getcwd()\n") == set()
    for case in _loaded("cpython-test").cases:
        if case.expect is Expect.ACCEPT:
            assert unbound_names(case.request["output"]["content"]) == set()


def test_sql_mutations_make_the_defect_they_name() -> None:
    sql = "SELECT a.x, b.y FROM a JOIN b ON a.id = b.id WHERE a.x = 1"
    tree = parse_statement(sql)
    assert tree is not None
    made = {d: op(sql, tree) for d, op in SQL_OPERATORS.items()}
    assert made[SqlDefect.TRUNCATED] == "SELECT a.x, b.y FROM a JOIN b ON a.id = b.id WHERE"
    assert "a.x > 5 AND a.x < 4" in (made[SqlDefect.CONTRADICTORY_RANGE] or "")
    assert "JOIN b AS a" in (made[SqlDefect.DUPLICATE_ALIAS] or "")
    assert (made[SqlDefect.GROUP_BY_ORDINAL] or "").endswith("GROUP BY 3")


def test_report_json_has_dev_and_test_figures_and_no_content(tmp_path: Path) -> None:
    _loaded("humaneval")
    out = tmp_path / "public_eval.json"
    argv = ["--budget", "12", "--sources", "humaneval", "--out", str(out)]
    assert public_eval.main(argv) == 0
    figures = json.loads(out.read_text())
    bench = figures["benchmarks"]["humaneval"]
    for half in ("dev", "test"):
        for key in ("n", "recall", "false_reject", "definite_false_reject", "p95_ms"):
            assert key in bench[half] and key in figures["overall"][half]
        assert bench[half]["errors"] == 0
    assert bench["dev"]["n"] + bench["test"]["n"] > 12
    assert set(bench["test"]["confusion"]) | set(bench["dev"]["confusion"]) >= {"good"}
    assert "pyflakes-errors" in bench["test"]["peers"]
    assert set(bench["gap"]) and {"false_reject", "miss"} <= set(bench["causes"])
    assert "has_close_elements" not in out.read_text()


def test_the_readme_quotes_the_figures_the_last_run_measured() -> None:
    assert readme_figures.main(["--check"]) == 0, "run python -m bench.readme_figures"


def _routed(item: str, *, good: bool, p_fail: float | None, decision: str = "accept") -> Outcome:
    expect = Expect.ACCEPT if good else Expect.REJECT
    return Outcome("b", item, expect, "good" if good else "bad", decision, False, (), 1.0,
                   p_fail=p_fail)  # fmt: skip


def test_what_the_evidence_reaches_within_the_bound_keeps_ties_together() -> None:
    outcomes = [
        _routed("s", good=False, p_fail=None, decision="iterate"),  # Stage 1 sent it back
        _routed("a", good=False, p_fail=0.9),
        _routed("b", good=False, p_fail=0.5),
        _routed("c", good=True, p_fail=0.5),  # tied with b: a router cannot split them
        _routed("d", good=False, p_fail=0.2),
        _routed("e", good=True, p_fail=0.2),
        _routed("f", good=True, p_fail=0.1),
    ]
    assert reachable_within_bound(outcomes, bound=0.0) == 0.5  # s and a only
    assert reachable_within_bound(outcomes, bound=1 / 3) == 0.75  # b comes with c
    assert reachable_within_bound(outcomes, bound=2 / 3) == 1.0
    unknown = [*outcomes, _routed("g", good=True, p_fail=None)]  # accepted, no P(fail)
    assert reachable_within_bound(unknown) is None
