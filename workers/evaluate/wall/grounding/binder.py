"""Which names a Python module uses but never binds (the ``UndefinedName`` check).

Every binding form counts: assignments and their star, tuple and walrus targets (also
from inside comprehensions), ``for``/``with``/``except ... as`` targets, imports at any
depth, function and class names, parameters, ``global``/``nonlocal``, ``del``, ``match``
capture patterns (``case Point(x=px)``, ``case [a, *rest]``, ``case {"k": v, **kw}``,
``case _ as y``), 3.12 type parameters, and the names Python itself provides
(builtins, module dunders, ``__class__`` in methods, ``__module__``/``__qualname__`` in
class bodies).

The check is deliberately lenient about scope: a name bound anywhere in the module
counts as bound everywhere. It reports only names bound nowhere, which is what a
hallucinated helper or a forgotten import looks like, and never a scoping subtlety.
"""

from __future__ import annotations

import ast
import builtins

#: Names every module can use without binding them.
PROVIDED = frozenset(dir(builtins)) | {
    "__name__",
    "__file__",
    "__doc__",
    "__builtins__",
    "__spec__",
    "__loader__",
    "__package__",
    "__path__",
    "__annotations__",
    "__cached__",
    "__class__",
    "__module__",
    "__qualname__",
    "WindowsError",
}


class _Binder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.loaded: dict[str, int] = {}
        self.star_import = False

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.loaded.setdefault(node.id, node.lineno)
        else:
            self.bound.add(node.id)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.bound.add(node.name)
        self._type_params(node)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.bound.add(node.name)
        self._type_params(node)
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        self.bound.add(node.arg)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.star_import = True
            else:
                self.bound.add((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        self.bound.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.bound.add(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.bound.add(node.rest)
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        # 3.12 ``type X = ...`` statements and type parameters; absent before 3.12.
        if type(node).__name__ in ("TypeAlias", "TypeVar", "ParamSpec", "TypeVarTuple"):
            name = getattr(node, "name", None)
            if isinstance(name, str):
                self.bound.add(name)
        super().generic_visit(node)

    def _type_params(self, node: ast.AST) -> None:
        for param in getattr(node, "type_params", ()):
            name = getattr(param, "name", None)
            if isinstance(name, str):
                self.bound.add(name)


#: Methods that write a namespace dict (``globals().update(PlistFormat.__members__)``).
_DICT_WRITES = frozenset({"update", "setdefault", "__setitem__", "pop", "popitem", "clear"})


def unbound_names(tree: ast.Module) -> list[tuple[int, str]]:
    """``(line, name)`` of each name loaded but bound nowhere, first use first.

    A ``from m import *``, or a module that writes its own namespace at run time, hides
    what is bound, so such modules report nothing; names the code probes for
    (``probed_names``) are not reported either.
    """
    binder = _Binder()
    binder.visit(tree)
    known = binder.bound | PROVIDED
    unbound = {name: line for name, line in binder.loaded.items() if name not in known}
    # The two further passes over the tree only for a module with something to report.
    if not unbound or binder.star_import or writes_own_namespace(tree):
        return []
    probed = probed_names(tree)
    return sorted((line, name) for name, line in unbound.items() if name not in probed)


#: Tests that choose code by interpreter: what they guard may be another one's builtin.
_INTERPRETER_TESTS = ("version_info", "sys.version", "platform", "implementation", "pypy")


def probed_names(tree: ast.Module) -> set[str]:
    """Names the code expects may be missing, so their absence is handled, not a bug.

    ``try: get_ipython except NameError:`` probes for a name the environment may inject;
    under ``if sys.version_info >= (3, 15):`` a newer interpreter's builtin is used.
    """
    found: set[str] = set()
    for node in ast.walk(tree):
        guarded: list[ast.AST] = []
        if isinstance(node, ast.Try) and any(_catches_name_error(h) for h in node.handlers):
            guarded = list(node.body)
        elif isinstance(node, ast.If | ast.IfExp):
            test = ast.unparse(node.test)
            if any(hint in test.lower() for hint in _INTERPRETER_TESTS):
                guarded = [node]
        for part in guarded:
            found.update(n.id for n in ast.walk(part) if isinstance(n, ast.Name))
    return found


def _catches_name_error(handler: ast.ExceptHandler) -> bool:
    """``except NameError``, said outright: a bare ``except:`` hides a typo, probes nothing."""
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught else []
    return any(isinstance(n, ast.Name) and n.id == "NameError" for n in names)


def writes_own_namespace(tree: ast.Module) -> bool:
    """Whether the module binds names no statement shows.

    ``globals()`` written to (by key, by a dict method, or through a name that holds it),
    ``sys.modules[__name__]`` handed out or changed, and the enum API that adds members to
    a module by name (``IntEnum._convert_('Signals', __name__, ...)``) all bind globals a
    static reading cannot list.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            if _names_module(node) or (
                _is_namespace(node.value) and not isinstance(node.ctx, ast.Load)
            ):
                return True
        elif isinstance(node, ast.Attribute) and _is_namespace(node.value):
            if node.attr in _DICT_WRITES:
                return True
        elif isinstance(node, ast.Assign | ast.NamedExpr) and _is_namespace(node.value):
            return True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "_convert_" and any(_is_dunder_name(a) for a in node.args):
                return True
    return False


def _is_namespace(node: ast.expr) -> bool:
    """A call of ``globals()`` or of ``vars()`` with no argument."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("globals", "vars")
        and not node.args
    )


def _names_module(node: ast.Subscript) -> bool:
    """``sys.modules[__name__]``: the module object itself, whose attributes are globals."""
    return (
        isinstance(node.value, ast.Attribute)
        and node.value.attr == "modules"
        and _is_dunder_name(node.slice)
    )


def _is_dunder_name(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "__name__"
