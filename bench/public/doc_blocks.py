"""``doc-blocks``: markdown documentation shipped inside the installed packages, with its code.

The installed Python distributions' markdown descriptions (their READMEs, as published on
PyPI), and the markdown files Debian's packages ship: Node.js's API documentation
(``/usr/share/doc/nodejs``), npm's command docs and its bundled modules' READMEs
(``/usr/lib/node_modules``), and the rest under ``/usr/share/doc`` and ``/usr/lib``, read
whether Debian compressed them (``README.md.gz``) or not; the READMEs of the npm
packages whose TypeScript sources ``code_corpus`` reads (``bench.public.npm_sources``);
and the READMEs of the most-used npm and PyPI packages, fetched once into the bench cache
(``bench.public.readme_sources``; ids ``npm:<name>`` and ``pypi:<name>``).
Written by the packages' maintainers: its fenced blocks are real documentation code, with
the elisions, console sessions, diffs, fragments and templates real documentation has.

The held-out rule and the halves apply per document (id ``pypi:<name>``, ``npm:<name>``
or ``file:<path>``), before the document is read (or fetched). Documents that repeat
another's text are read once.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.public.code_corpus import first_seen
from bench.public.heldout import Half, half_of, is_held_out, sample_rank
from bench.public.npm_sources import sources_dir
from bench.public.pypi_readmes import OWN, normalised
from bench.public.readme_sources import cached_readmes, fetch_readmes, packages

BENCHMARK = "doc-blocks"
ROOTS = ("/usr/share/doc", "/usr/lib")
_SUFFIXES = (".md", ".markdown", ".md.gz", ".markdown.gz")
MAX_CHARS = 400_000


@dataclass(frozen=True)
class Document:
    """One markdown document and its half."""

    item_id: str
    text: str
    half: Half


def _document_ids(*, widened: bool = True) -> dict[str, Path | importlib.metadata.Distribution]:
    """Every document's source by id.

    ``widened``: with the compressed and the npm documents (the latency bench's documents
    without code keep to the first corpus, so its figures stay comparable).
    """
    found: dict[str, Path | importlib.metadata.Distribution] = {}
    for dist in importlib.metadata.distributions():
        name = normalised(dist.metadata["Name"] or "")
        if name and name != OWN:
            found[f"pypi:{name}"] = dist
    roots: tuple[str, ...] = ROOTS
    suffixes: tuple[str, ...] = _SUFFIXES[:2]
    if widened:
        roots, suffixes = (*ROOTS, str(sources_dir())), _SUFFIXES
        for item_id, path in cached_readmes(lambda i: not is_held_out(BENCHMARK, i)):
            found.setdefault(item_id, path)  # an installed distribution's own text wins
    for root in roots:
        for directory, _, files in os.walk(root):
            for name in files:
                if name.lower().endswith(suffixes):
                    found[f"file:{directory}/{name}"] = Path(directory) / name
    return found


def fetch() -> dict[str, int]:
    """Fetch the pinned packages' READMEs not yet cached (held-out ones never)."""
    return fetch_readmes(lambda item_id: not is_held_out(BENCHMARK, item_id))


def _text(source: Path | importlib.metadata.Distribution) -> str:
    if isinstance(source, Path):
        try:
            raw = source.read_bytes()
            if source.suffix == ".gz":
                raw = gzip.decompress(raw)
            return raw.decode("utf-8")
        except (OSError, EOFError, UnicodeDecodeError):
            return ""
    meta = source.metadata.json
    if "markdown" not in str(meta.get("description_content_type", "")):
        return ""
    return str(meta.get("description", ""))


def unfenced_documents() -> Iterator[Document]:
    """The tunable markdown files that hold no fenced block (outputs without code)."""
    for item_id, source in sorted(
        _document_ids(widened=False).items(), key=lambda p: sample_rank(BENCHMARK, p[0])
    ):
        if not isinstance(source, Path) or is_held_out(BENCHMARK, item_id):
            continue
        text = _text(source)
        if 200 <= len(text) <= MAX_CHARS and "```" not in text and "~~~" not in text:
            yield Document(item_id, text, half_of(BENCHMARK, item_id))


def documents(counts: dict[str, int]) -> Iterator[Document]:
    """Every tunable document that holds a fence, in sample order, with its half."""
    seen: set[str] = set()
    sources = _document_ids()
    unfetched = {p.item_id for p in packages() if p.item_id not in sources}
    counts["held_out"] = sum(is_held_out(BENCHMARK, i) for i in unfetched)  # never fetched
    for item_id in sorted(sources, key=lambda i: sample_rank(BENCHMARK, i)):
        if is_held_out(BENCHMARK, item_id):
            counts["held_out"] = counts.get("held_out", 0) + 1
            continue
        text = _text(sources[item_id])
        if not text or len(text) > MAX_CHARS or ("```" not in text and "~~~" not in text):
            counts["no fenced block"] = counts.get("no fenced block", 0) + 1
            continue
        if not first_seen(seen, text, counts):
            continue
        yield Document(item_id, text, half_of(BENCHMARK, item_id))
