"""The README's links lead somewhere: every relative link names a file of the checkout.

The docs site checks its own pages' links when it builds (``make docs``, warnings as
errors); the README is not part of the site, so this test checks it.
"""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent


def relative_links(text: str) -> list[str]:
    """The targets of the Markdown links in ``text`` that point into the checkout."""
    found = []
    for token in MarkdownIt().parse(text):
        for child in token.children or []:
            href = str(child.attrs.get("href", "")) if child.type == "link_open" else ""
            if href and "://" not in href and not href.startswith(("#", "mailto:")):
                found.append(href.split("#", 1)[0])
    return found


def test_every_relative_link_of_the_readme_names_a_file() -> None:
    links = relative_links((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(links) >= 20  # the docs' map is there
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_a_broken_link_would_be_found() -> None:
    assert relative_links("[a](docs/nope.md) [b](https://x.invalid/) [c](#top)") == ["docs/nope.md"]
