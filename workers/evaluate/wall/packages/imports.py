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


def required_imports(tree: ast.Module) -> list[Imported]:
    """Every absolute import not guarded by a handler of ``ImportError``, in line order."""
    optional = _optional(tree)
    found: list[Imported] = []
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            found.extend(Imported(a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module != "__future__":  # ``from google.cloud import storage``: the
                # namespace package is ``google.cloud.storage``
                found.extend(
                    Imported(
                        f"{node.module}.{a.name}" if a.name != "*" else node.module, node.lineno
                    )
                    for a in node.names
                )
    return sorted(found, key=lambda i: (i.line, i.module))


def _optional(tree: ast.Module) -> set[int]:
    """Ids of the nodes under a ``try`` that catches ImportError, or a probing ``if``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        guarded: list[ast.stmt] = []
        if isinstance(node, ast.Try | ast.TryStar) and any(
            _catches_import(h) for h in node.handlers
        ):
            guarded = node.body
        elif isinstance(node, ast.If):
            test = ast.unparse(node.test).lower()
            if any(hint in test for hint in GUARD_HINTS):
                guarded = [*node.body, *node.orelse]
        out.update(id(inner) for stmt in guarded for inner in ast.walk(stmt))
    return out


def _catches_import(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        (isinstance(c, ast.Name) and c.id in _CATCHES_IMPORT)
        or (isinstance(c, ast.Attribute) and c.attr in _CATCHES_IMPORT)
        for c in caught
    )
