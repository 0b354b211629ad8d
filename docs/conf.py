"""Sphinx configuration of the docs site: ``make docs`` builds it into docs/_build/html.

Why Sphinx with MyST (docs/contributing-to-docs.md says more): the pages stay plain
Markdown that also reads on a forge, and Sphinx turns every broken link, missing anchor
or page left out of the navigation into a warning, which ``-W`` makes an error.
"""

from __future__ import annotations

from typing import Any

from pygments.lexers.special import TextLexer

project = "windags-evaluator"
author = "the windags-evaluator developers"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
# Anchors for headings down to ####, so that [text](page.md#a-heading) is checked.
myst_heading_anchors = 4
html_theme = "furo"
html_title = "windags-evaluator"
html_show_sourcelink = False
# Nothing is fetched while building: no intersphinx, no remote images, no web fonts.
html_theme_options: dict[str, Any] = {"navigation_with_keys": True}


def setup(app: Any) -> None:
    """Show Mermaid sources (docs/house.md) as text: Pygments has no lexer for them."""
    app.add_lexer("mermaid", TextLexer)
