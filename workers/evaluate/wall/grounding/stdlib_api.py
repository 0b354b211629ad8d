"""Hallucinated standard-library APIs: ``json.parse``, ``os.path.joinpath``.

A model that writes ``json.parse(text)`` has invented an API; the code fails the first
time the line runs. The reviewing interpreter's own standard library is the reference:
a module named in ``sys.stdlib_module_names`` is imported (never a third-party package
named by the output, and never the output itself) and its attributes are looked up.
Only names bound by an ``import`` in the output and never rebound are checked, so a
local variable called ``json`` is left alone.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType

#: Standard-library modules whose import has side effects (a browser, printed text, Tk).
_NEVER_IMPORT = frozenset({"antigravity", "this", "__hello__", "__phello__", "idlelib", "turtle"})


def hallucinated_apis(tree: ast.Module) -> list[tuple[int, str]]:
    """``(line, dotted name)`` of each stdlib attribute the output uses that does not exist.

    The tree is walked once; the guards (three more walks) are read only when a use is
    missing, which almost no real code has.
    """
    nodes = list(ast.walk(tree))
    modules, rebound = _imports(nodes)
    suspects: list[tuple[ast.AST, int, str]] = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            suspects.extend(
                (node, node.lineno, f"{node.module}.{a.name}")
                for a in node.names
                if a.name != "*" and _missing(node.module, a.name)
            )
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            chain = _chain(node)
            if chain is None or chain[0] not in modules or chain[0] in rebound:
                continue
            dotted = _first_missing(modules[chain[0]], chain[1:])
            if dotted is not None:
                suspects.append((node, node.lineno, dotted))
    if not suspects:
        return []
    guarded = _guarded(tree)
    return sorted({(line, dotted) for node, line, dotted in suspects if id(node) not in guarded})


#: Attributes the interpreter sets only at run time (the ``sys`` docs: "not always defined";
#: the ``curses`` docs: ``LINES``, ``COLS`` and the ``ACS_*`` characters after ``initscr()``).
_RUNTIME_SET = frozenset(
    {"sys.last_type", "sys.last_value", "sys.last_traceback", "sys.last_exc", "sys.ps1", "sys.ps2"}
    | {"curses.LINES", "curses.COLS"}
)
_RUNTIME_PREFIXES = ("curses.ACS_",)
#: Tests that choose code by platform, version, implementation or presence (read in lower
#: case): what they guard may be missing here and present where the code is meant to run.
GUARD_HINTS = (
    "platform",
    "os.name",
    "hasattr",
    "getattr",
    "win",
    "posix",
    "darwin",
    "version_info",
    "sys.version",
    "type_checking",
    "implementation",
    "pypy",
    "cpython",
)


def _guarded(tree: ast.Module) -> set[int]:
    """Nodes whose attributes may legitimately be missing here.

    Code written for several platforms and versions probes for attributes: under ``try``,
    under an ``if`` on the platform, the version, ``TYPE_CHECKING`` or ``hasattr``, after
    naming the attribute in a string (``hasattr(os, "lchmod")``), or by assigning it
    (``sys.ps1 = ">>> "``). Annotations name types, which may be the type checker's alone
    (``sys._version_info``), and are never run under ``from __future__ import annotations``.
    """
    named = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
    assigned = {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and n.ctx is not None and not isinstance(n.ctx, ast.Load)
    }
    out: set[int] = set()
    for node in ast.walk(tree):
        probing = isinstance(node, ast.Try) and bool(node.handlers)
        if isinstance(node, ast.If | ast.IfExp):
            test = ast.unparse(node.test)
            probing = any(hint in test.lower() for hint in GUARD_HINTS)
        if probing:
            out.update(id(child) for child in ast.walk(node))
        elif isinstance(node, ast.Attribute) and (node.attr in named or node.attr in assigned):
            out.add(id(node))
        for annotation in _annotations(node):
            out.update(id(child) for child in ast.walk(annotation))
    return out


def _annotations(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.arg | ast.AnnAssign):
        return [node.annotation] if node.annotation is not None else []
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [node.returns] if node.returns is not None else []
    return []


def _imports(nodes: list[ast.AST]) -> tuple[dict[str, str], set[str]]:
    """Names bound to stdlib modules by ``import``, and names bound any other way."""
    modules: dict[str, str] = {}
    rebound: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    modules[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    modules[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if _is_submodule(node.module, alias.name):
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                else:
                    rebound.add(alias.asname or alias.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            rebound.add(node.id)
        elif isinstance(node, ast.arg):
            rebound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            rebound.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            rebound.update(node.names)
    checkable = {k: v for k, v in modules.items() if _stdlib(v)}
    return checkable, rebound


def _chain(node: ast.Attribute) -> list[str] | None:
    """``os.path.joinpath`` as ``["os", "path", "joinpath"]``; None for ``f().x``."""
    parts: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        parts.append(current.attr)
        current = current.value
    if not isinstance(current, ast.Name):
        return None
    parts.append(current.id)
    return parts[::-1]


def _first_missing(module: str, attributes: list[str]) -> str | None:
    """The dotted name of the first attribute that does not exist, walking modules only."""
    dotted = module
    for attribute in attributes:
        if _missing(dotted, attribute):
            return f"{dotted}.{attribute}"
        if not _is_submodule(dotted, attribute):
            return None
        dotted = f"{dotted}.{attribute}"
    return None


def _stdlib(dotted: str) -> bool:
    top = dotted.split(".")[0]
    return top in sys.stdlib_module_names and top not in _NEVER_IMPORT


@lru_cache(maxsize=512)
def _module(dotted: str) -> ModuleType | None:
    """The stdlib module, imported; None when it cannot be (another platform's module)."""
    if not _stdlib(dotted):
        return None
    try:
        return importlib.import_module(dotted)
    except Exception:  # a stdlib module for another platform, or one that needs a device
        return None


@lru_cache(maxsize=4096)
def _missing(module: str, attribute: str) -> bool:
    """Whether stdlib ``module`` has no ``attribute`` and no submodule of that name."""
    loaded = _module(module)
    dotted = f"{module}.{attribute}"
    if loaded is None or hasattr(loaded, attribute) or dotted in _RUNTIME_SET:
        return False
    if dotted.startswith(_RUNTIME_PREFIXES) or attribute in _defined_in_source(module):
        return False
    return not _is_submodule(module, attribute)


@lru_cache(maxsize=512)
def _defined_in_source(module: str) -> frozenset[str]:
    """Names the module's own Python source binds at top level, on any platform.

    ``ctypes.windll`` exists only on Windows, but ``ctypes/__init__.py`` defines it under
    ``if _os.name == "nt"``: code that uses it was written for Windows, not invented.
    """
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return frozenset()
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return frozenset()
    try:
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return frozenset()
    return frozenset(_top_level_names(tree.body))


def _top_level_names(body: list[ast.stmt]) -> set[str]:
    """Names bound by module-level statements, inside ``if``/``try``/``with`` too."""
    names: set[str] = set()
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(statement.name)
        elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in statement.names)
        for block in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(statement, block, None)
            if isinstance(inner, list) and not isinstance(
                statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
            ):
                names |= _top_level_names([s for s in inner if isinstance(s, ast.stmt)])
        if isinstance(statement, ast.ExceptHandler):
            names |= _top_level_names(statement.body)
    return names


@lru_cache(maxsize=4096)
def _is_submodule(module: str, attribute: str) -> bool:
    if not _stdlib(module):
        return False
    loaded = _module(module)
    if loaded is not None and isinstance(getattr(loaded, attribute, None), ModuleType):
        return True
    if loaded is None or not hasattr(loaded, "__path__"):
        return False
    try:
        return importlib.util.find_spec(f"{module}.{attribute}") is not None
    except (ImportError, ValueError):
        return False
