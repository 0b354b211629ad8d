"""``cpython-test``: code CPython's own test suite labels as a SyntaxError, or as valid.

Sources, all read from the reviewing interpreter's ``Lib/test`` at run time:

- ``test_syntax.py``: the doctest examples of its docstring (an example whose expected
  output is a ``SyntaxError`` -> floor; one with no exception -> accept) and the constant
  code strings passed to ``_check_error`` (floor).
- ``test_grammar.py``: code strings passed to ``check_syntax_error`` and the
  ``INVALID_UNDERSCORE_LITERALS`` (floor); every test method, alone in its class, under
  the module-level imports and definitions that bind the names it reads (accept: CPython runs them).

An accept case must be self-contained: a valid snippet that reads a name bound only
elsewhere (a doctest example using an earlier example's ``f``) is left out and counted.
- every ``badsyntax_*.py`` file (floor).

Each label is cross-checked with ``compile(code, name, "exec")``: a snippet the test
labels a SyntaxError only under another compile mode (or vice versa) is left out and
counted. Files and labels are taken round-robin so a small ``limit`` still spans them. The id is the
test file name plus the case index (``test_syntax.py#12``).
"""

from __future__ import annotations

import ast
import builtins
import doctest
import importlib
import symtable
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

from bench.public.case import GOOD, Expect, Loaded, case, interleave, make_request
from bench.public.cpython_stdlib import stdlib_dir
from bench.public.heldout import is_held_out

BENCHMARK = "cpython-test"
SYNTAX_ERROR = "syntax_error"

#: A snippet's code, or the file that holds it: a whole-file snippet is read only when it
#: is not held out (the others are numbered by parsing their file, and a held-out one is
#: dropped before it is checked, built into a request or printed).
Snippet = tuple[str | Path, Expect]


def test_dir() -> Path:
    """The interpreter's ``Lib/test``."""
    return stdlib_dir() / "test"


def load(limit: int | None = None) -> Loaded:
    """Labelled snippets from the sources above, file by file, at most ``limit``."""
    loaded = Loaded(BENCHMARK)
    items = interleave(_streams())
    for item_id, code, expect in items:
        if is_held_out(BENCHMARK, item_id):
            loaded.held_out += 1
            continue
        if limit is not None and len(loaded.cases) >= limit:
            break
        if isinstance(code, Path):
            code = code.read_text(encoding="utf-8", errors="replace")
        if not _compiles_as_labelled(code, expect):
            loaded.skip("label depends on the compile mode")
            continue
        if expect is Expect.ACCEPT and unbound_names(code):
            loaded.skip("valid, but reads names bound elsewhere in the test (not self-contained)")
            continue
        label = GOOD if expect is Expect.ACCEPT else SYNTAX_ERROR
        request = make_request(
            benchmark=BENCHMARK,
            item_id=item_id,
            label=label,
            kind="python",
            content=code,
            skill="python-snippet-writer",
        )
        loaded.cases.append(case(BENCHMARK, item_id, expect, label, request))
    return loaded


def _streams() -> list[list[tuple[str, str | Path, Expect]]]:
    """(id, code, expect) per file and label, so a small sample has both labels."""
    streams = []
    for name, snippets in _files():
        numbered = [(f"{name}#{i}", code, expect) for i, (code, expect) in enumerate(snippets)]
        for wanted in Expect:
            stream = [item for item in numbered if item[2] is wanted]
            if stream:
                streams.append(stream)
    return streams


def _files() -> Iterator[tuple[str, list[Snippet]]]:
    root = test_dir()
    yield "test_syntax.py", _test_syntax(root / "test_syntax.py")
    yield "test_grammar.py", _test_grammar(root / "test_grammar.py")
    for path in sorted(root.rglob("badsyntax_*.py"), key=lambda p: p.name):
        yield path.name, [(path, Expect.FLOOR)]


def _parse(source: str) -> ast.Module:
    """Parse a test file; its invalid escape sequences are theirs, not a finding."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source)


def _test_syntax(path: Path) -> list[Snippet]:
    tree = _parse(path.read_text(encoding="utf-8"))
    snippets: list[Snippet] = []
    for example in doctest.DocTestParser().get_examples(ast.get_docstring(tree) or ""):
        if example.exc_msg is None:
            snippets.append((example.source, Expect.ACCEPT))
        elif example.exc_msg.startswith(("SyntaxError", "IndentationError", "TabError")):
            snippets.append((example.source, Expect.FLOOR))
    snippets += [(code, Expect.FLOOR) for code in _string_args(tree, "_check_error", 0)]
    return snippets


def _test_grammar(path: Path) -> list[Snippet]:
    tree = _parse(path.read_text(encoding="utf-8"))
    snippets: list[Snippet] = [
        (code, Expect.FLOOR) for code in _string_args(tree, "check_syntax_error", 1)
    ]
    snippets += [
        (code, Expect.FLOOR) for code in _list_constant(tree, "INVALID_UNDERSCORE_LITERALS")
    ]
    source = path.read_text(encoding="utf-8")
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        bases = ", ".join(ast.get_source_segment(source, b) or "" for b in cls.bases)
        for method in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            segment = ast.get_source_segment(source, method, padded=True) or ""
            body = f"class {cls.name}({bases}):\n{segment}\n"
            snippets.append((_with_context(tree, source, body), Expect.ACCEPT))
    return snippets


def _with_context(tree: ast.Module, source: str, body: str) -> str:
    """``body`` under the module-level statements that bind the names it reads."""
    free = unbound_names(body)
    needed = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            module = importlib.import_module(node.module or "")
            binds = {name for name in free if hasattr(module, name)}
        else:
            binds = _binds(node)
        if binds & free:
            needed.append(ast.get_source_segment(source, node) or "")
    return "\n".join([*needed, "", "", body]) if needed else body


def _binds(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def unbound_names(code: str) -> set[str]:
    """Names the code reads at module level or as globals but never binds (not builtins)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            top = symtable.symtable(code, "<case>", "exec")
        except (SyntaxError, ValueError):
            return {"<does not compile>"}
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    bound |= {s.get_name() for s in top.get_symbols() if s.is_namespace()}
    used: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (table is top or symbol.is_global()):
                used.add(symbol.get_name())
        tables.extend(table.get_children())
    return used - bound - set(dir(builtins))


def _string_args(tree: ast.AST, function: str, position: int) -> list[str]:
    """Constant code strings passed to ``function`` (by name or attribute), in order."""
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or len(node.args) <= position:
            continue
        callee = node.func
        name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
        mode = next((k.value for k in node.keywords if k.arg == "mode"), None)
        if name != function or (mode is not None and not _is_exec(mode)):
            continue
        code = _constant_string(node.args[position])
        if code is not None:
            found.append(code)
    return found


def _is_exec(mode: ast.expr) -> bool:
    return isinstance(mode, ast.Constant) and mode.value == "exec"


def _constant_string(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Call) and len(node.args) == 1:
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        inner = _constant_string(node.args[0])
        if name == "dedent" and inner is not None:
            return textwrap.dedent(inner)
    return None


def _list_constant(tree: ast.Module, name: str) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == name for t in node.targets):
            if isinstance(node.value, ast.List):
                return [c for e in node.value.elts if (c := _constant_string(e)) is not None]
    return []


def _compiles_as_labelled(code: str, expect: Expect) -> bool:
    """CPython's own verdict in exec mode agrees with the test's label."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(code, "<case>", "exec")
        except SyntaxError:
            return expect is Expect.FLOOR
        except ValueError:  # null bytes: not a SyntaxError, no clear label
            return False
    return expect is Expect.ACCEPT
