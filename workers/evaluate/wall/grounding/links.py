"""Malformed links: ``http:/example.com``, ``https://exa mple.com``.

A link is a claim that a reader can follow it. Prose and data state links; a program's
string literals are data it handles (a prefix it tests for, a template it fills in, a
broken URL its tests feed a parser) and its comments are notes, so in Python only the
docstrings are read, and SQL states none. Code quoted in prose or a docstring (a fenced
block, an inline span like ``base_url="http://evil/"``) is code, not a link offered.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputKind
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding
from workers.evaluate.parsed import ParseFailure, python_statements, python_tree
from workers.evaluate.wall.filler import prose_text

#: A link ends where prose or markup resumes: a space, a bracket, a quote, a backtick
#: (``http://host:4318``), a backslash escape (``http://example.com\x07``), a tag; an IPv6
#: literal's brackets (``http://[::1]:8080/``) are part of it.
_URL = re.compile(r"\bhttps?:/{0,3}(?:\[[0-9A-Fa-f:.]+\])?[^\s)\]<>\"'`\\]*", re.I)
#: A scheme alone ("http: and https:") or with a placeholder (``{host}``, ``%s``) is a
#: scheme's name, a prefix or a template, not a link.
_TEMPLATE = re.compile(r"^https?:/*$|%[sdr(]|\{[^{}]*\}", re.I)
#: One label of a host name: letters (any script), digits, hyphens (``rr-.github.io`` is
#: served, whatever RFC 1123 says of a trailing hyphen).
_LABEL = re.compile(r"^[\w-]*[^\W_][\w-]*$")


def malformed_urls(output: NodeOutput) -> list[Finding]:
    """One finding for the links of ``output`` that cannot be followed, if any."""
    bad = [u for text in stated_texts(output) for u in _URL.findall(text) if not _followable(u)]
    if not bad:
        return []
    return [
        finding(
            Dimension.GROUNDING,
            IssueCode.MALFORMED_URL,
            f"malformed URL: {bad[0][:80]}",
            min(0.6, 0.3 * len(bad)),
            field="urls",
            fix="Give complete, well-formed URLs or drop them",
        )
    ]


def stated_texts(output: NodeOutput) -> Iterator[str]:
    """The texts in which ``output`` states links: prose without code, docstrings, JSON."""
    if output.kind is OutputKind.SQL:
        return
    if output.kind is OutputKind.JSON:
        yield output.content
        return
    if output.kind is not OutputKind.PYTHON:
        yield prose_text(output.content)
        return
    tree = python_tree(output.content)
    if isinstance(tree, ParseFailure):
        return
    for node in python_statements(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield prose_text(docstring)


def _followable(url: str) -> bool:
    """A scheme, ``//``, and a host a reader could reach (user info, ports, IDN allowed).

    A host is dotted (``example.com``, ``müller.de``), ``localhost``, an IP literal, or
    a one-label name with a port (``http://collector:4318``, a service on its network).
    """
    if _TEMPLATE.search(url):
        return True
    url = url.rstrip(".,;:")
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:  # a bad port, an unclosed [IPv6 literal
        return False
    if not url.lower().startswith(("http://", "https://")) or not host:
        return False
    if ":" in host:  # an IPv6 literal, brackets already checked by urlsplit
        return True
    labels = host.split(".")
    if not all(_LABEL.match(label) for label in labels):
        return False
    return len(labels) > 1 or host == "localhost" or port is not None
