"""docs/references.md's figures are what the last ``python -m bench.url_refs`` measured."""

from __future__ import annotations

from bench import url_refs_doc


def test_the_references_page_quotes_the_current_figures() -> None:
    assert url_refs_doc.main(["--check"]) == 0, "run python -m bench.url_refs_doc"
