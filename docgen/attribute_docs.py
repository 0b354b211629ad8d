"""The docstrings written under class attributes (enum members), which Python drops."""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap


def attribute_docs(cls: type) -> dict[str, str]:
    """Each attribute of ``cls`` that has a string literal right under it, and that string."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    found = {}
    for statement, following in itertools.pairwise(body):
        if not isinstance(statement, ast.Assign | ast.AnnAssign):
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        doc = following.value if isinstance(following, ast.Expr) else None
        if isinstance(doc, ast.Constant) and isinstance(doc.value, str):
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = inspect.cleandoc(doc.value)
    return found
