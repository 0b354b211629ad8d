"""The Python name binder and the hallucinated-stdlib-API check, on snippets and real stdlib."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pyflakes.checker
import pyflakes.messages
import pytest

from workers.evaluate.wall.grounding.binder import unbound_names
from workers.evaluate.wall.grounding.checks import check_grounding
from workers.evaluate.wall.grounding.stdlib_api import hallucinated_apis

from .builders import output
from .realdata import STDLIB, stdlib_source, tunable_stdlib_trees

BINDING_FORMS = {
    "match class": "def f(p):\n match p:\n  case Point(x=px, y=0):\n   return px\n",
    "match sequence": "def f(p):\n match p:\n  case [a, *rest]:\n   return a, rest\n",
    "match mapping": "def f(p):\n match p:\n  case {'k': v, **kw}:\n   return v, kw\n",
    "match as": "def f(p):\n match p:\n  case _ as y:\n   return y\n",
    "walrus in comprehension": "def f(xs):\n [y := x for x in xs]\n return y\n",
    "except as": "try:\n pass\nexcept ValueError as err:\n print(err)\n",
    "global": "def f():\n global g\n g = 1\n\ndef h():\n return g\n",
    "nonlocal": "def f():\n n = 0\n def h():\n  nonlocal n\n  n += 1\n return n\n",
    "star target": "first, *others = [1, 2]\nprint(others)\n",
    "for and with": "with open('f') as fh:\n for i, line in enumerate(fh):\n  print(i, line)\n",
    "import inside function": "def f():\n import os.path\n return os.path.sep\n",
    "class dunders": "class A:\n at = __module__ + __qualname__\n def m(s):\n  return __class__\n",
    "module dunders": "print(__spec__, __loader__, __package__, __annotations__)\n",
}


@pytest.mark.parametrize("code", BINDING_FORMS.values(), ids=BINDING_FORMS.keys())
def test_every_binding_form_binds(code: str) -> None:
    names = {name for _, name in unbound_names(ast.parse(code))}
    assert names <= {"Point"}


@pytest.mark.skipif(sys.version_info < (3, 12), reason="type parameters are 3.12 syntax")
def test_type_parameters_bind() -> None:
    code = "def first[T](xs: list[T]) -> T:\n    return xs[0]\ntype Pair[K] = tuple[K, K]\n"
    assert unbound_names(ast.parse(code)) == []


def test_a_name_bound_nowhere_is_reported() -> None:
    assert unbound_names(ast.parse("def f(xs):\n    return sum(xs) + offset\n")) == [(2, "offset")]


NAMESPACE_WRITERS = {
    "globals().update": "globals().update(Colour.__members__)\nprint(RED)\n",
    "globals() by key": "for k in ('a', 'b'):\n    globals()['CO_' + k] = k\nprint(CO_a)\n",
    "globals() through a name": "ns = globals()\nns['SPEED'] = 3\nprint(SPEED)\n",
    "enum _convert_": "IntEnum._convert_('Signals', __name__, lambda n: True)\nprint(Signals)\n",
    "sys.modules[__name__]": "import sys\nsetattr(sys.modules[__name__], 'X', 1)\nprint(X)\n",
}


@pytest.mark.parametrize("code", NAMESPACE_WRITERS.values(), ids=NAMESPACE_WRITERS.keys())
def test_a_module_that_writes_its_own_namespace_reports_no_unbound_name(code: str) -> None:
    assert unbound_names(ast.parse(code)) == []


def test_reading_globals_does_not_hide_an_unbound_name() -> None:
    code = "if 'x' in globals() and globals()['x']:\n    print(missing)\n"
    assert unbound_names(ast.parse(code)) == [(2, "missing")]


@pytest.mark.parametrize("module", ["inspect.py", "plistlib.py", "ssl.py"])
def test_stdlib_modules_that_bind_globals_at_run_time_are_not_undefined_name_findings(
    module: str,
) -> None:
    # inspect (globals() by key), plistlib (globals().update), ssl (IntEnum._convert_).
    found = check_grounding(output("python", stdlib_source(module)))
    assert "UndefinedName" not in {f.issue.code for f in found}


def _pyflakes_undefined(tree: ast.Module, path: Path) -> set[str]:
    checker = pyflakes.checker.Checker(tree, filename=str(path))
    return {
        str(m.message_args[0])
        for m in checker.messages
        if isinstance(m, pyflakes.messages.UndefinedName)
    }


def test_no_undefined_name_on_the_stdlib_that_pyflakes_does_not_also_report() -> None:
    """Every tunable ``Lib/*.py``: a name we call unbound must be one pyflakes calls undefined."""
    checked = 0
    for name, tree in tunable_stdlib_trees():
        ours = {unbound for _, unbound in unbound_names(tree)}
        if ours:
            assert ours <= _pyflakes_undefined(tree, STDLIB / name), name
        checked += 1
    assert checked > 100


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import json\n\ndata = json.parse('{}')\n", "json.parse"),
        ("import os\n\np = os.path.joinpath('a', 'b')\n", "os.path.joinpath"),
        ("from json import parse\n", "json.parse"),
        ("import xml.etree.ElementTree as ET\n\nET.parse_string('<a/>')\n", None),
    ],
)
def test_hallucinated_stdlib_attributes_are_found(code: str, expected: str | None) -> None:
    found = [dotted for _, dotted in hallucinated_apis(ast.parse(code))]
    if expected is None:
        assert found == ["xml.etree.ElementTree.parse_string"]
    else:
        assert found == [expected]
    codes = [f.issue.code for f in check_grounding(output("python", code))]
    assert "HallucinatedAPI" in codes


@pytest.mark.parametrize(
    "code",
    [
        "import json\n\ndata = json.loads('{}')\n",
        "import os\n\np = os.path.join('a', 'b')\n",
        "import json\n\njson = {'parse': 1}\nprint(json.parse)\n",
        "def f(json):\n    return json.parse()\n",
        "import xml\nimport xml.dom\n\nprint(xml.dom)\n",
    ],
)
def test_real_or_rebound_names_are_not_flagged(code: str) -> None:
    assert hallucinated_apis(ast.parse(code)) == []


def test_third_party_modules_named_by_output_are_never_imported() -> None:
    name = "windags_surely_absent_pkg"
    assert hallucinated_apis(ast.parse(f"import {name}\n\n{name}.parse()\n")) == []
    assert name not in sys.modules


def test_stdlib_modules_use_only_attributes_that_exist() -> None:
    """Real code as the reference: no tunable ``Lib/*.py`` module uses an API we call invented."""
    checked = 0
    for name, tree in tunable_stdlib_trees():
        assert hallucinated_apis(tree) == [], name
        checked += 1
    assert checked > 100
