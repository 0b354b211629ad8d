"""``code-files``: real files in eleven languages, shipped inside the packages installed here.

Nobody on this project wrote them: the Python distributions in the running interpreter's
``site-packages``, and Debian's packages under ``/usr/lib``, ``/usr/share``, ``/etc`` and
``/usr/bin`` (Node.js and npm with their docs and modules, the Google Cloud SDK's YAML,
PostgreSQL, fontconfig, shared-mime-info...), and CPython's own test data under
``~/.pyenv`` (``test_tomllib``'s valid TOML files). SQL comes from sqlglot's fixtures
(``bench.public.sqlglot_fixtures``), one statement an item, default dialect only.

A file's language is its extension's (``.py``, ``.json``, ``.yaml``/``.yml``, ``.toml``,
``.js``/``.mjs``/``.cjs`` but not ``.min.js``, ``.ts``/``.tsx``, ``.sh`` and scripts with a
``sh``/``bash`` shebang, ``.html``/``.htm``, ``.xml``, ``Dockerfile``); a path under a
directory named ``invalid`` or ``fail`` is a test's deliberately broken input and is left
out. Files that repeat another file's bytes are read once. The id is
``<language>:<path>``; the held-out rule is applied to it before the file is opened, and
the sample is taken in ``sample_rank`` order, independent of the halves.
"""

from __future__ import annotations

import hashlib
import os
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.public.archives import cache_dir
from bench.public.heldout import Half, half_of, is_held_out, sample_rank
from bench.public.npm_sources import fetch_sources, sources_dir
from bench.public.wheel_sources import fetch_wheel_html, wheels_dir
from schemas.code import CodeLanguage

BENCHMARK = "code-files"
MIN_CHARS = 40
MAX_CHARS = 150_000
_L = CodeLanguage

SUFFIXES: dict[str, CodeLanguage] = {
    ".py": _L.PYTHON,
    ".json": _L.JSON,
    ".yaml": _L.YAML,
    ".yml": _L.YAML,
    ".toml": _L.TOML,
    ".js": _L.JAVASCRIPT,
    ".mjs": _L.JAVASCRIPT,
    ".cjs": _L.JAVASCRIPT,
    ".ts": _L.TYPESCRIPT,
    ".tsx": _L.TYPESCRIPT,
    ".sh": _L.SHELL,
    ".html": _L.HTML,
    ".htm": _L.HTML,
    ".xml": _L.XML,
}
_SCRIPT_DIRS = ("/usr/bin", "/usr/sbin", "/etc/init.d")
_SKIPPED_PARTS = frozenset({"invalid", "fail", "bad", "errors", "__pycache__"})


@dataclass(frozen=True)
class RealFile:
    """One real file: its id, language, text and half."""

    item_id: str
    language: CodeLanguage
    text: str
    half: Half


def roots() -> list[Path]:
    """Where the installed packages' files are."""
    found = [Path(sysconfig.get_paths()["purelib"])]
    found += [Path(p) for p in ("/usr/lib", "/usr/share", "/etc")]
    found += [Path.home() / ".pyenv" / "versions", *map(Path, _SCRIPT_DIRS)]
    # The TypeScript compiler's own declaration files, where the bench installed it.
    found.append(cache_dir() / "node" / "node_modules" / "typescript" / "lib")
    found += [sources_dir(), wheels_dir()]
    return [p for p in found if p.is_dir()]


def install_sources() -> None:
    """Fetch what ``roots`` names in the bench cache (TypeScript compiler, npm, wheels' HTML).

    Before ``candidates``: on a machine whose cache is empty the TypeScript files would
    otherwise not be there to list.
    """
    from bench.public.code_reference import typescript_available

    typescript_available()
    fetch_sources()
    fetch_wheel_html()


def language_of_path(path: Path) -> CodeLanguage | None:
    """The language a file's name (or, for scripts, its shebang) says it is in."""
    name = path.name
    if name.endswith(".min.js") or name.endswith(".d.ts.map"):
        return None
    if name in ("Dockerfile", "Containerfile") or name.endswith(".dockerfile"):
        return _L.DOCKERFILE
    language = SUFFIXES.get(path.suffix.lower())
    if language is not None or str(path.parent) not in _SCRIPT_DIRS:
        return language
    try:
        with path.open("rb") as handle:
            first = handle.readline(80)
    except OSError:
        return None
    return (
        _L.SHELL
        if first.startswith((b"#!/bin/sh", b"#!/bin/bash", b"#!/usr/bin/env bash"))
        else None
    )


def candidates() -> dict[CodeLanguage, list[Path]]:
    """Every candidate path per language (names only: nothing is read)."""
    found: dict[CodeLanguage, list[Path]] = {}
    seen: set[str] = set()
    npm, wheels = sources_dir(), wheels_dir()
    for root in roots():
        for directory, subdirs, files in os.walk(root, followlinks=False):
            subdirs[:] = [d for d in subdirs if d.lower() not in _SKIPPED_PARTS]
            for name in files:
                path = Path(directory) / name
                key = str(path)
                if key in seen or "/work/" in key or path.is_symlink():
                    continue
                seen.add(key)
                language = language_of_path(path)
                if root == npm and language is not _L.TYPESCRIPT:
                    continue  # the npm packages' built JavaScript is a compiler's output
                if root == wheels and language is not _L.HTML:
                    continue
                if language is not None:
                    found.setdefault(language, []).append(path)
    return found


def sample(
    paths: list[Path], language: CodeLanguage, per_half: int, counts: dict[str, int]
) -> Iterator[RealFile]:
    """Up to ``per_half`` files of each half, in sample order, held-out ones never opened."""
    taken = {Half.DEV: 0, Half.TEST: 0}
    digests: set[str] = set()
    ids = sorted((f"{language.value}:{p}" for p in paths), key=lambda i: sample_rank(BENCHMARK, i))
    for item_id in ids:
        if is_held_out(BENCHMARK, item_id):
            counts["held_out"] = counts.get("held_out", 0) + 1
            continue
        half = half_of(BENCHMARK, item_id)
        if taken[half] >= per_half:
            if all(n >= per_half for n in taken.values()):
                break
            continue
        text = _read(Path(item_id.split(":", 1)[1]), counts)
        if text is None:
            continue
        if not first_seen(digests, text, counts):
            continue
        taken[half] += 1
        yield RealFile(item_id, language, text, half)


def first_seen(digests: set[str], text: str, counts: dict[str, int]) -> bool:
    """Whether no earlier item had these bytes (a repeat is counted as a duplicate)."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    if digest in digests:
        counts["duplicate"] = counts.get("duplicate", 0) + 1
        return False
    digests.add(digest)
    return True


def _read(path: Path, counts: dict[str, int]) -> str | None:
    try:
        raw = path.read_bytes()
    except OSError:
        counts["unreadable"] = counts.get("unreadable", 0) + 1
        return None
    if not MIN_CHARS <= len(raw) <= MAX_CHARS:
        counts["size"] = counts.get("size", 0) + 1
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        counts["not utf-8"] = counts.get("not utf-8", 0) + 1
        return None


def sql_statements(per_half: int, counts: dict[str, int]) -> Iterator[RealFile]:
    """Default-dialect statements of sqlglot's fixtures, each an item of ``code-files``."""
    from bench.public.archives import DataUnavailable, fetch, installed_version, read_tree
    from bench.public.sqlglot_fixtures import LEFT_OUT, PREFIX
    from bench.public.sqlglot_fixtures import _statements as fixture_statements

    try:
        archive = fetch("sqlglot", installed_version("sqlglot"), sdist=True)
    except DataUnavailable:
        counts["sqlglot sdist unavailable"] = 1
        return
    tree = read_tree(archive, "tests/")
    found: list[tuple[str, str]] = []
    for name, raw in sorted(tree.items()):
        if not name.startswith(PREFIX) or not name.endswith(".sql"):
            continue
        if any(tag in name for tag in LEFT_OUT):
            continue
        for item_id, sql, meta in fixture_statements(name.removeprefix(PREFIX), raw.decode()):
            if not meta.get("dialect") and len(sql) >= 20:
                found.append((f"sql:{item_id}", sql))
    taken = {Half.DEV: 0, Half.TEST: 0}
    for item_id, sql in sorted(found, key=lambda pair: sample_rank(BENCHMARK, pair[0])):
        if is_held_out(BENCHMARK, item_id):
            counts["held_out"] = counts.get("held_out", 0) + 1
            continue
        half = half_of(BENCHMARK, item_id)
        if taken[half] < per_half:
            taken[half] += 1
            yield RealFile(item_id, _L.SQL, sql, half)
