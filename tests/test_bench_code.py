"""The code benches' own parts: the mutants are real defects, and docs/code.md is current."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import code_figures
from bench.code_eval import fenced, fenced_flags, floor_fails
from bench.public import doc_marks, readme_sources
from bench.public.archives import CACHE_ENV
from bench.public.code_corpus import RealFile
from bench.public.code_mutations import candidates
from bench.public.code_reference import reference_valid
from bench.public.doc_marks import Mark
from bench.public.heldout import Half
from schemas.code import CodeLanguage

PYTHON = '''import json


def load(path):
    """Read one JSON file."""
    with open(path) as handle:
        data = json.load(handle)
    if not isinstance(data, dict):
        raise ValueError("not an object")
    return {"path": path, "keys": sorted(data)}
'''


def test_every_operator_that_applies_makes_a_defect_the_reference_and_the_engine_refuse() -> None:
    item = RealFile("python:example.py", CodeLanguage.PYTHON, PYTHON, Half.DEV)
    assert reference_valid(CodeLanguage.PYTHON, [PYTHON]) == [True]
    assert not floor_fails(CodeLanguage.PYTHON, PYTHON) and not fenced_flags(item, PYTHON)
    kept = 0
    for operator, mutants in candidates(CodeLanguage.PYTHON, item.item_id, PYTHON).items():
        invalid = [
            m
            for m, ok in zip(mutants, reference_valid(CodeLanguage.PYTHON, mutants), strict=True)
            if not ok
        ]
        if invalid:
            kept += 1
            assert floor_fails(CodeLanguage.PYTHON, invalid[0]), operator
            assert fenced_flags(item, invalid[0]), operator
    assert kept >= 4


def test_a_file_holding_backticks_is_fenced_with_a_longer_fence() -> None:
    text = 'DOC = """\n```python\nx = 1\n```\n"""\n'
    item = RealFile("python:doc.py", CodeLanguage.PYTHON, text, Half.DEV)
    assert "````python\n" in fenced(item)
    assert not fenced_flags(item, text)


def test_the_shell_reference_is_bash() -> None:
    assert reference_valid(CodeLanguage.SHELL, ["for i do echo; done\n", "if true; then\n"]) == [
        True,
        False,
    ]


def test_docs_code_md_shows_the_last_measured_figures() -> None:
    assert code_figures.main(["--check"]) == 0, "run python -m bench.code_figures"


def test_the_pinned_readme_list_names_each_package_once_with_its_version() -> None:
    listed = readme_sources.packages()
    assert {p.registry for p in listed} == {"npm", "pypi"}
    assert len({p.item_id for p in listed}) == len(listed)
    assert all(p.version and " " not in p.name for p in listed)


def test_only_wanted_readmes_with_text_are_read_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    first, second, third = readme_sources.packages()[:3]
    for package, text in ((first, "# a\n```ts\nx\n```\n"), (second, ""), (third, "# c\n")):
        package.cached.parent.mkdir(parents=True, exist_ok=True)
        package.cached.write_text(text)
    found = dict(readme_sources.cached_readmes(lambda i: i != third.item_id))
    assert found == {first.item_id: first.cached}  # an empty file: the package has none
    # Nothing unwanted (held out) is fetched: with none wanted, no client is even started.
    assert readme_sources.fetch_readmes(lambda _: False) == {"fetched": 0, "none": 0}


def test_flagged_documentation_is_counted_by_what_it_holds_of_what_writers_do() -> None:
    js, py, sh = CodeLanguage.JAVASCRIPT, CodeLanguage.PYTHON, CodeLanguage.SHELL
    assert doc_marks.marks(js, "f(a,\n  // ...\n") == [Mark.ELISION]
    assert doc_marks.marks(js, "const all = [...items, ...more]\nf(all\n") == []  # spreads
    assert doc_marks.marks(py, ">>> f(1\n") == [Mark.PROMPT]
    assert doc_marks.marks(py, "-x = 1\n+x = 2\n") == [Mark.DIFF]
    assert doc_marks.marks(py, "name = '{{ name }}'\n") == [Mark.TEMPLATE]
    assert doc_marks.marks(sh, "curl -H 'Bearer <your-token>' \\\n") == [Mark.PLACEHOLDER]
    assert doc_marks.marks(js, "const a = `${b}`\nconst c: Map<K> = d\n") == []  # its own syntax
    assert doc_marks.marks(py, "print(f(1)\n") == []
