"""Mutation operators that turn a good Python solution into a realistic defective output.

Each operator models one way a code-writing node really fails, is deterministic (it
depends only on the solution and the item's index), and returns ``None`` when it does not
apply to a solution (the harness counts those). The operators never consult the engine
under test: a compile error is confirmed by CPython's ``compile``, everything else holds
by construction.

- ``truncated`` (floor): the output stops mid-body, as when a token limit cuts it: the
  first cut at or after the middle of the body that CPython refuses to compile.
- ``stub`` (reject): the requested function's body is ``pass`` or ``...`` (alternating by
  index) under its docstring: the node returned a placeholder.
- ``unbound_name`` (reject): the last read of a local name is misspelled into a name bound
  nowhere in the module and not a builtin (``NameError`` at run time).
- ``return_outside_function`` (floor): the body is emitted without its ``def`` line, so
  its ``return`` stands at module level (CPython: "'return' outside function").
- ``hallucinated_api`` (reject): the returned value goes through a standard-library
  attribute that does not exist (``json.parse``, ``copy.deep_copy``, ``operator.identity``,
  each checked absent in the running interpreter), with its module imported.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import textwrap
import warnings
from collections.abc import Callable
from enum import StrEnum

from bench.public.case import Expect


class PyDefect(StrEnum):
    """The Python defect classes, named after the operator that makes them."""

    TRUNCATED = "truncated"
    STUB = "stub"
    UNBOUND_NAME = "unbound_name"
    RETURN_OUTSIDE_FUNCTION = "return_outside_function"
    HALLUCINATED_API = "hallucinated_api"


EXPECT: dict[PyDefect, Expect] = {
    PyDefect.TRUNCATED: Expect.FLOOR,
    PyDefect.STUB: Expect.REJECT,
    PyDefect.UNBOUND_NAME: Expect.REJECT,
    PyDefect.RETURN_OUTSIDE_FUNCTION: Expect.FLOOR,
    PyDefect.HALLUCINATED_API: Expect.REJECT,
}

_HALLUCINATIONS = (
    ("json", "parse", "json.parse(json.dumps({x}))"),
    ("copy", "deep_copy", "copy.deep_copy({x})"),
    ("operator", "identity", "operator.identity({x})"),
)


def compiles(code: str) -> bool:
    """CPython's verdict: does ``code`` compile as a module?"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(code, "<case>", "exec")
        except (SyntaxError, ValueError):
            return False
    return True


def entry_function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    """The top-level function the task asked for."""
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def truncated(prompt: str, solution: str, entry: str, index: int) -> str | None:
    """Cut mid-body at the first point CPython cannot compile."""
    body = solution.rstrip()
    for cut in range(len(body) // 2, len(body)):
        code = prompt + body[:cut]
        if not compiles(code):
            return code
    return None


def stub(prompt: str, solution: str, entry: str, index: int) -> str | None:
    """The docstring, then ``pass`` (even index) or ``...`` (odd)."""
    lines = [line for line in prompt.rstrip().splitlines() if line.strip()]
    indent = lines[-1][: len(lines[-1]) - len(lines[-1].lstrip())] or "    "
    code = f"{prompt.rstrip()}\n{indent}{'pass' if index % 2 == 0 else '...'}\n"
    return code if compiles(code) else None


def unbound_name(prompt: str, solution: str, entry: str, index: int) -> str | None:
    """Misspell the last read of a name the function binds itself."""
    code = prompt + solution
    tree = ast.parse(code)
    function = entry_function(tree, entry)
    if function is None:
        return None
    local = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    local |= {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    reads = [
        n
        for n in ast.walk(function)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in local
    ]
    if not reads:
        return None
    target = max(reads, key=lambda n: (n.lineno, n.col_offset))
    bound = _bound_names(tree) | set(dir(builtins))
    new = next(
        (c for c in (target.id + "s", target.id + "_", target.id + "_value") if c not in bound),
        None,
    )
    if new is None:
        return None
    mutated = _splice(code, target, new)
    return mutated if compiles(mutated) else None


def return_outside_function(prompt: str, solution: str, entry: str, index: int) -> str | None:
    """Everything before the ``def`` line, then the body dedented to module level."""
    tree = ast.parse(prompt + solution)
    function = entry_function(tree, entry)
    if function is None:
        return None
    first = min([function.lineno, *(d.lineno for d in function.decorator_list)])
    head = "".join(prompt.splitlines(keepends=True)[: first - 1])
    code = f"{head}{textwrap.dedent(solution)}"
    return code if not compiles(code) and "return" in solution else None


def hallucinated_api(prompt: str, solution: str, entry: str, index: int) -> str | None:
    """Route the last returned value through a stdlib attribute that does not exist."""
    module, attribute, template = _HALLUCINATIONS[index % len(_HALLUCINATIONS)]
    if hasattr(importlib.import_module(module), attribute):
        return None
    code = prompt + solution
    function = entry_function(ast.parse(code), entry)
    returns = (
        [n for n in ast.walk(function) if isinstance(n, ast.Return) and n.value] if function else []
    )
    if not returns:
        return None
    value = max(returns, key=lambda n: (n.lineno, n.col_offset)).value
    assert value is not None
    segment = ast.get_source_segment(code, value)
    if segment is None or "\n" in segment:
        return None
    mutated = f"import {module}\n" + _splice(code, value, template.format(x=segment))
    return mutated if compiles(mutated) else None


Operator = Callable[[str, str, str, int], "str | None"]

OPERATORS: dict[PyDefect, Operator] = {
    PyDefect.TRUNCATED: truncated,
    PyDefect.STUB: stub,
    PyDefect.UNBOUND_NAME: unbound_name,
    PyDefect.RETURN_OUTSIDE_FUNCTION: return_outside_function,
    PyDefect.HALLUCINATED_API: hallucinated_api,
}


def _bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def _splice(code: str, node: ast.expr, replacement: str) -> str:
    """Replace one single-line node's text (ast offsets count UTF-8 bytes)."""
    lines = code.splitlines(keepends=True)
    assert node.end_lineno == node.lineno and node.end_col_offset is not None
    raw = lines[node.lineno - 1].encode()
    start, end = node.col_offset, node.end_col_offset
    lines[node.lineno - 1] = (raw[:start] + replacement.encode() + raw[end:]).decode()
    return "".join(lines)
