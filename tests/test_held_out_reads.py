"""No loader reads a held-out item's content: each is handed a source that records what it read.

The held-out rule is checked BEFORE an item's content is read. ``test_public_eval`` shows
that no held-out case is built; these tests show that none is read either, at the finest
grain each loader's data has:

- an item that is a file (stdlib and site-packages modules, CPython's ``badsyntax_*.py``,
  a distribution's ``METADATA``): every file the loader opens is recorded by an audit
  hook (``sys.addaudithook``), whatever opens it;
- an item that is a line of a data file (HumaneEval, HaluEval): every line is handed over
  tagged with its index, and every line the loader parses is recorded;
- an item that is a position inside a file the loader must parse to number it (the
  JSON-Schema-Test-Suite, sqlglot's fixtures, CPython's syntax tests): the file is read
  whole by necessity, and the loader's per-item step is recorded (what it compiles,
  parses or builds).

Each recorder has a positive control: it must have seen tunable items, and the loader must
have met held-out ones, or the test proves nothing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bench.public import (
    archives,
    cpython_stdlib,
    cpython_test,
    halueval,
    humaneval,
    jsonschema_suite,
    pypi_readmes,
    site_packages,
    sqlglot_fixtures,
)
from bench.public.case import Expect, Loaded
from bench.public.heldout import is_held_out
from bench.public.sources import LOADERS
from tests.infrastructure import unavailable

#: Enough items that every loader meets held-out ones (a quarter of all items).
LIMIT = 12

#: Files opened while recording (``None``: not recording). The audit hook is process-wide
#: and cannot be removed, so it is installed once and is a no-op outside a recording.
_opened: list[str] | None = None
_hooked = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _opened is not None and event == "open" and isinstance(args[0], str | bytes | Path):
        _opened.append(str(args[0] if not isinstance(args[0], bytes) else args[0].decode()))


@contextmanager
def opened_files() -> Iterator[list[str]]:
    """Every file opened in this process while the block runs."""
    global _opened, _hooked
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked = True
    _opened = []
    try:
        yield _opened
    finally:
        _opened = None


def _load(name: str) -> Loaded:
    loaded = LOADERS[name](LIMIT)
    if loaded.unavailable:
        unavailable(f"{name} data: {loaded.unavailable}")
    assert loaded.cases, f"{name} built nothing: the recorder saw nothing to judge"
    assert loaded.held_out > 0, f"{name} counted no held-out item of {LIMIT} (met none?)"
    return loaded


def _assert_read(name: str, read: set[str], loaded: Loaded) -> None:
    """Nothing held out was read, and the recorder did see the tunable items read."""
    held = sorted(i for i in read if is_held_out(name, i))
    assert held == [], f"{name} read held-out items: {held[:5]}"
    built = {c.id for c in loaded.cases}
    assert built <= read, f"the recorder missed what {name} read: {sorted(built - read)[:5]}"


# --- items that are files ---------------------------------------------------------------


def _under(root: Path, paths: list[str]) -> list[Path]:
    found = []
    for path in paths:
        resolved = Path(path).resolve()
        if resolved.is_relative_to(root.resolve()):
            found.append(resolved.relative_to(root.resolve()))
    return found


def _stdlib_items(opened: list[str]) -> set[str]:
    return {p.name for p in _under(cpython_stdlib.stdlib_dir(), opened) if len(p.parts) == 1}


def _site_items(opened: list[str]) -> set[str]:
    return {str(p) for p in _under(site_packages.site_dir(), opened) if p.suffix == ".py"}


def _metadata_items(opened: list[str]) -> set[str]:
    """A distribution's name for each metadata file opened inside its ``*-info`` folder."""
    names = set()
    for path in map(Path, opened):
        folder = path.parent.name
        if folder.endswith((".dist-info", ".egg-info")):
            names.add(pypi_readmes.normalised(folder.rpartition(".")[0].partition("-")[0]))
    return names


FILE_ITEMS: dict[str, Callable[[list[str]], set[str]]] = {
    cpython_stdlib.BENCHMARK: _stdlib_items,
    site_packages.BENCHMARK: _site_items,
    pypi_readmes.BENCHMARK: _metadata_items,
}


@pytest.mark.parametrize("name", sorted(FILE_ITEMS))
def test_a_loader_opens_no_held_out_file(name: str) -> None:
    with opened_files() as opened:
        loaded = _load(name)
    _assert_read(name, FILE_ITEMS[name](opened), loaded)


def test_the_file_recorder_catches_a_loader_that_reads_before_it_checks() -> None:
    # The way pypi-readme used to name distributions: parse every METADATA, then filter.
    import importlib.metadata

    with opened_files() as opened:
        names = [str(d.metadata["Name"]) for d in importlib.metadata.distributions()]
    read = _metadata_items(opened)
    assert any(is_held_out(pypi_readmes.BENCHMARK, pypi_readmes.normalised(n)) for n in names)
    assert any(is_held_out(pypi_readmes.BENCHMARK, i) for i in read)


# --- items that are lines ---------------------------------------------------------------


class _Line(str):
    """A data line that knows its place in the file."""

    line_no: int


class _Bytes(bytes):
    """A data line (bytes) that knows its place in the file."""

    line_no: int


def _tagged(lines: Any, kind: type[_Line] | type[_Bytes]) -> Iterator[Any]:
    for index, line in enumerate(lines):
        tagged = kind(line)
        tagged.line_no = index
        yield tagged


class _RecordingJson:
    """``json`` for a loader: ``loads`` notes the index of every tagged line it parses."""

    def __init__(self) -> None:
        self.parsed: set[int] = set()

    def loads(self, raw: Any) -> Any:
        self.parsed.add(getattr(raw, "line_no", -1))
        return json.loads(raw)


class _TaggingGzip:
    """``gzip`` for ``humaneval``: its text lines come tagged."""

    @staticmethod
    @contextmanager
    def open(*args: Any, **kwargs: Any) -> Iterator[Iterator[_Line]]:
        import gzip

        with gzip.open(*args, **kwargs) as handle:
            yield _tagged(handle, _Line)


def test_humaneval_parses_no_held_out_line(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = _RecordingJson()
    monkeypatch.setattr(humaneval, "json", recorder)
    monkeypatch.setattr(humaneval, "gzip", _TaggingGzip)
    loaded = _load(humaneval.BENCHMARK)
    _assert_read(humaneval.BENCHMARK, {f"HumanEval/{i}" for i in recorder.parsed}, loaded)


def test_halueval_parses_no_held_out_line(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = _RecordingJson()
    real = archives.member_lines
    monkeypatch.setattr(halueval, "json", recorder)
    monkeypatch.setattr(halueval, "member_lines", lambda *a: _tagged(real(*a), _Bytes))
    for name in halueval.LAYOUTS:
        recorder.parsed.clear()
        loaded = _load(name)
        _assert_read(name, {str(i) for i in recorder.parsed}, loaded)


# --- items that are positions inside a file ---------------------------------------------


def _recording(module: Any, function: str, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Record the item id (second argument) of every call to ``module.function``."""
    seen: set[str] = set()
    real = getattr(module, function)

    def record(loaded: Loaded, item_id: str, *rest: Any) -> Any:
        seen.add(item_id)
        return real(loaded, item_id, *rest)

    monkeypatch.setattr(module, function, record)
    return seen


@pytest.mark.parametrize("module", [jsonschema_suite, sqlglot_fixtures], ids=lambda m: m.BENCHMARK)
def test_a_fixture_loader_builds_from_no_held_out_position(
    module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _recording(module, "_add", monkeypatch)
    loaded = _load(module.BENCHMARK)
    _assert_read(module.BENCHMARK, seen, loaded)


def test_cpython_test_compiles_and_opens_no_held_out_snippet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: set[str] = set()
    real_streams, real_compiles = cpython_test._streams, cpython_test._compiles_as_labelled

    class Snippet(str):
        item_id: str

    def streams() -> list[list[tuple[str, str | Path, Expect]]]:
        tagged = []
        for stream in real_streams():
            items: list[tuple[str, str | Path, Expect]] = []
            for item_id, code, expect in stream:
                if isinstance(code, str):
                    code = Snippet(code)
                    code.item_id = item_id
                items.append((item_id, code, expect))
            tagged.append(items)
        return tagged

    def compiles(code: str, expect: Expect) -> bool:
        seen.add(getattr(code, "item_id", "?"))
        return real_compiles(code, expect)

    monkeypatch.setattr(cpython_test, "_streams", streams)
    monkeypatch.setattr(cpython_test, "_compiles_as_labelled", compiles)
    with opened_files() as opened:
        loaded = _load(cpython_test.BENCHMARK)
    # A whole-file snippet is read from its file: ``badsyntax_x.py`` is item ``badsyntax_x.py#0``.
    files = {f"{Path(p).name}#0" for p in opened if Path(p).name.startswith("badsyntax_")}
    seen.discard("?")
    _assert_read(cpython_test.BENCHMARK, seen | files, loaded)


def test_every_loader_has_a_recorder() -> None:
    recorded = set(FILE_ITEMS) | set(halueval.LAYOUTS) | {humaneval.BENCHMARK}
    recorded |= {jsonschema_suite.BENCHMARK, sqlglot_fixtures.BENCHMARK, cpython_test.BENCHMARK}
    assert set(LOADERS) == recorded, "a new loader needs a recorder here"
