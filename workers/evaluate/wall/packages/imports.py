"""The absolute imports of a Python module that it cannot do without.

Optional imports break nothing when the package is missing, so they are left out: under
``try`` whose handler catches ``ImportError`` (or anything wider), and under an ``if`` (or
its ``else``) that chooses by platform, version, implementation or ``TYPE_CHECKING``
(``stdlib_api.GUARD_HINTS``: ``if PYPY: import _continuation``, a type checker's
``_typeshed``). Relative imports and ``__future__`` name no distribution.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from workers.evaluate.wall.grounding.stdlib_api import GUARD_HINTS

#: Handlers that catch a failed import.
_CATCHES_IMPORT = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


@dataclass(frozen=True, slots=True)
class Imported:
    """One absolute import."""

    module: str
    """The dotted name imported (``google.cloud.storage``; ``from a import b``: ``a.b``)."""
    line: int
    """Where."""

    @property
    def top(self) -> str:
        """The top-level module, which the distribution ships (``google``)."""
        return self.module.split(".", 1)[0]


#: The fields that hold statements: imports are statements, so expressions are never walked.
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def required_imports(tree: ast.Module) -> list[Imported]:
    """Every absolute import not guarded as optional, in line order.

    Walks statements only, and reads an ``if``'s test only when an import sits under it.
    """
    found: list[Imported] = []
    probing: dict[int, bool] = {}
    stack: list[tuple[ast.AST, bool, tuple[ast.If, ...]]] = [(tree, False, ())]
    while stack:
        node, optional, ifs = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            if not optional and not any(_probes(i, probing) for i in ifs):
                found.extend(_imported(node))
            continue
        if isinstance(node, ast.Try | ast.TryStar) and any(
            _catches_import(h) for h in node.handlers
        ):
            stack.extend((child, True, ifs) for child in node.body)
            stack.extend((h, optional, ifs) for h in node.handlers)
            stack.extend((c, optional, ifs) for c in (*node.orelse, *node.finalbody))
            continue
        inner = (*ifs, node) if isinstance(node, ast.If) else ifs
        for field in _BLOCKS:
            for child in getattr(node, field, ()):
                stack.append((child, optional, inner))
    return sorted(found, key=lambda i: (i.line, i.module))


def _imported(node: ast.Import | ast.ImportFrom) -> list[Imported]:
    if isinstance(node, ast.Import):
        return [Imported(a.name, node.lineno) for a in node.names]
    if node.level or not node.module or node.module == "__future__":
        return []
    # ``from google.cloud import storage``: the namespace package is ``google.cloud.storage``.
    return [
        Imported(f"{node.module}.{a.name}" if a.name != "*" else node.module, node.lineno)
        for a in node.names
    ]


def _probes(node: ast.If, seen: dict[int, bool]) -> bool:
    """Whether an ``if`` chooses by platform, version, implementation or TYPE_CHECKING."""
    if id(node) not in seen:
        test = ast.unparse(node.test).lower()
        seen[id(node)] = any(hint in test for hint in GUARD_HINTS)
    return seen[id(node)]


def _catches_import(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        (isinstance(c, ast.Name) and c.id in _CATCHES_IMPORT)
        or (isinstance(c, ast.Attribute) and c.attr in _CATCHES_IMPORT)
        for c in caught
    )
