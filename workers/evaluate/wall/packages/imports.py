"""The absolute imports of a Python module that it cannot do without.

An import under ``try`` whose handler catches ``ImportError`` (or anything wider) is
optional: the module runs without it, so a missing package there breaks nothing. Relative
imports and ``__future__`` name no distribution.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

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
    """Ids of the nodes inside a ``try`` body some handler of which catches ImportError."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try | ast.TryStar) and any(
            _catches_import(h) for h in node.handlers
        ):
            out.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
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
