"""Wall, substance: functions left unimplemented, told apart from intentional empty bodies.

A short body is not a stub. Python states intent in several ways, and real code uses
them all: ``@abstractmethod`` and ``@overload``, ``Protocol`` members, declarations under
``if TYPE_CHECKING:``, hook methods a base class leaves empty or raising
``NotImplementedError`` for subclasses, empty ``__init__``s, ``pass``-bodied exception
classes and no-op overrides. A stub is a function the task asked for (named in the task
or in the contract's ``required_fields``) or a top-level function that does nothing;
methods count only when most of the module is unimplemented (a skeleton).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from schemas.quality import Dimension
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding

_FUNCTION = ast.FunctionDef | ast.AsyncFunctionDef
_DECLARING = {
    "abstractmethod",
    "abstractproperty",
    "abstractclassmethod",
    "abstractstaticmethod",
    "overload",
}
_PROTOCOL_BASES = {"Protocol", "ABC", "Generic"}
_EXCEPTION_BASE = re.compile(r"(?:Error|Exception|Warning|Exit|Interrupt)$")
#: An identifier a task names as code: backticked, called, or shaped like an identifier.
_TASK_NAME = re.compile(
    r"`([A-Za-z_]\w*)`|\b([A-Za-z_]\w*)\s*\(|"
    r"\b([a-z]\w*_\w*|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)\b"
)
#: Return annotations under which ``return None`` is a real answer.
_NONE_ADMITTING = {"None", "Optional", "Any", "object", "NoReturn", "Never"}
_NONE_TEXT = re.compile(r"\bNone\b|\bOptional\b|\bAny\b|\bobject\b")
#: Share of a module's functions left unimplemented that makes it a skeleton.
SKELETON_SHARE = 0.5
#: The least a stub the task asked for costs: the output does not do what was asked.
WANTED_PENALTY = 0.5
#: A docstring saying the body is empty on purpose.
_EMPTY_ON_PURPOSE = re.compile(
    r"\b(?:deprecated|no-?op|does nothing|do nothing|intentionally|on purpose|dummy|"
    r"backwards?[- ]compat\w*|for compatibility|override (?:this|in))\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class _Site:
    """A function and where it is defined."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    owner: ast.ClassDef | None
    top_level: bool
    local: bool  # defined inside a function: a helper or a dummy (grammar tests, fixtures)


def task_names(task: str | None) -> set[str]:
    """Identifiers the task names as code."""
    if not task:
        return set()
    return {name for groups in _TASK_NAME.findall(task) for name in groups if name}


def python_stubs(tree: ast.Module, wanted: set[str]) -> list[Finding]:
    """Unimplemented functions the task asked for, top-level ones, or a skeleton module."""
    classes: list[ast.ClassDef] = []
    sites = list(_sites(tree.body, classes, owner=None, top_level=True, local=False))
    subclassed = {_name(base) for node in classes for base in node.bases}
    if not sites:
        return []
    asked: list[str] = []
    loose: list[str] = []  # top-level functions that do nothing
    skeleton: list[str] = []
    empty = [unimplemented_function(site.node) for site in sites]
    # ``if windows: def f(): pass`` / ``else: def f(): <work>``: alternatives, not a gap.
    implemented = {site.node.name for site, stub in zip(sites, empty, strict=True) if not stub}
    for site, stub in zip(sites, empty, strict=True):
        if not stub or _declares(site) or site.node.name in implemented:
            continue
        name = site.node.name
        if name in wanted:
            asked.append(name)
        elif site.local or _says_empty_on_purpose(site.node):
            continue
        elif site.top_level:
            loose.append(name)
        elif not _hook(site, subclassed):
            skeleton.append(name)
    loose = _not_used_as_values(tree, loose)
    unimplemented = len(asked) + len(loose) + len(skeleton)
    flagged = asked + loose
    if len(skeleton) >= 2 and unimplemented / len(sites) >= SKELETON_SHARE:
        flagged.extend(skeleton)
    if not flagged:
        return []
    share = len(flagged) / len(sites)
    floor = WANTED_PENALTY if asked else 0.0
    return [
        finding(
            Dimension.SUBSTANCE,
            IssueCode.STUB_BODY,
            f"functions with no implementation: {', '.join(flagged[:5])}"
            + (f" (asked for: {', '.join(asked[:5])})" if asked else ""),
            min(0.9, max(floor, 0.1 + 0.8 * share)),
            field=flagged[0],
            fix="Implement the stubbed functions",
        )
    ]


def unimplemented_function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A stub body, or a body that returns None where the signature promises a value."""
    return is_stub(node.body) or _returns_none_against(node)


def _returns_none_against(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``-> list[str]`` over ``return None``: the promised value was never written."""
    statements = [s for s in node.body if not _is_docstring(s)]
    if node.returns is None or len(statements) != 1:
        return False
    only = statements[0]
    if not isinstance(only, ast.Return) or not (
        only.value is None or (isinstance(only.value, ast.Constant) and only.value.value is None)
    ):
        return False
    return not _admits_none(node.returns)


def _admits_none(annotation: ast.expr) -> bool:
    if isinstance(annotation, ast.Constant):
        value = annotation.value
        return value is None or (isinstance(value, str) and bool(_NONE_TEXT.search(value)))
    if isinstance(annotation, ast.BinOp):
        return _admits_none(annotation.left) or _admits_none(annotation.right)
    if isinstance(annotation, ast.Subscript) and _name(annotation) == "Union":
        members = annotation.slice
        return any(
            _admits_none(m) for m in (members.elts if isinstance(members, ast.Tuple) else [members])
        )
    return _name(annotation) in _NONE_ADMITTING


def is_stub(body: list[ast.stmt]) -> bool:
    """Nothing but docstrings, imports, and ``pass``, ``...`` or ``raise NotImplementedError``."""
    statements = [
        s for s in body if not (_is_docstring(s) or isinstance(s, ast.Import | ast.ImportFrom))
    ]
    if not statements:
        return True
    if len(statements) != 1:
        return False
    only = statements[0]
    if isinstance(only, ast.Pass):
        return True
    if isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant):
        return only.value.value is Ellipsis
    return _raises_not_implemented(only)


def _says_empty_on_purpose(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    docstring = ast.get_docstring(node, clean=False)
    return docstring is not None and _EMPTY_ON_PURPOSE.search(docstring) is not None


def _not_used_as_values(tree: ast.Module, names: list[str]) -> list[str]:
    """``names`` less those the module uses as values rather than calls.

    ``type(_f)``, ``return _dummy``, ``callback=_noop``: an empty function passed around
    is a sentinel, not missing work.
    """
    if not names:
        return names
    wanted = set(names)
    loads: dict[str, int] = dict.fromkeys(names, 0)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in wanted and isinstance(node.ctx, ast.Load):
            loads[node.id] += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in wanted:
                loads[node.func.id] -= 1
    return [name for name in names if loads[name] <= 0]


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _raises_not_implemented(statement: ast.stmt) -> bool:
    if not isinstance(statement, ast.Raise) or statement.exc is None:
        return False
    target = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
    return _name(target) == "NotImplementedError"


def _sites(
    body: list[ast.stmt],
    classes: list[ast.ClassDef],
    *,
    owner: ast.ClassDef | None,
    top_level: bool,
    local: bool,
) -> Iterator[_Site]:
    """Every function, with its class; ``if TYPE_CHECKING:`` blocks are declarations.

    Statements only, never expressions: one pass over a fraction of the tree.
    """
    for statement in body:
        if isinstance(statement, _FUNCTION):
            yield _Site(statement, owner, top_level, local)
            yield from _sites(statement.body, classes, owner=None, top_level=False, local=True)
        elif isinstance(statement, ast.ClassDef):
            classes.append(statement)
            yield from _sites(
                statement.body, classes, owner=statement, top_level=False, local=local
            )
        elif isinstance(statement, ast.If) and _name(statement.test) == "TYPE_CHECKING":
            yield from _sites(
                statement.orelse, classes, owner=owner, top_level=top_level, local=local
            )
        else:
            for block, fallback in _blocks(statement):
                yield from _sites(
                    block, classes, owner=owner, top_level=top_level, local=local or fallback
                )


def _blocks(statement: ast.stmt) -> Iterator[tuple[list[ast.stmt], bool]]:
    """The statement lists nested in a compound statement (if, try, with, for, match).

    Each comes with whether it is a fallback for a missing dependency (``except
    ImportError:``), whose functions stand in for ones that cannot work without it.
    """
    for field in ("body", "orelse", "finalbody"):
        block = getattr(statement, field, None)
        if isinstance(block, list):
            yield block, False
    for handler in getattr(statement, "handlers", ()):
        yield handler.body, _catches_import_error(handler)
    for case in getattr(statement, "cases", ()):
        yield case.body, False


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught else []
    return any(_name(n) in ("ImportError", "ModuleNotFoundError") for n in names)


def _declares(site: _Site) -> bool:
    """Declared on purpose: abstract, overload, or a Protocol member."""
    if any(_name(d) in _DECLARING for d in site.node.decorator_list):
        return True
    return site.owner is not None and any(_name(b) == "Protocol" for b in site.owner.bases)


def _hook(site: _Site, subclassed: set[str]) -> bool:
    """A method meant to be empty or overridden."""
    owner = site.owner
    if owner is None:
        return False
    bases = {_name(b) for b in owner.bases}
    return (
        site.node.name == "__init__"
        or _raises_not_implemented(site.node.body[-1])
        or owner.name in subclassed
        or bool(bases & _PROTOCOL_BASES)
        or any(_name(k.value) == "ABCMeta" for k in owner.keywords)
        or any(_EXCEPTION_BASE.search(b) for b in bases)
    )


def _name(node: ast.expr) -> str:
    """The last name of ``a``, ``a.b``, ``a[b]`` or ``a(...)``; '' otherwise."""
    if isinstance(node, ast.Subscript | ast.Call):
        return _name(node.value if isinstance(node, ast.Subscript) else node.func)
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""
