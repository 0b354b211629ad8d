"""The Floor refuses what Python's compiler refuses, not only what ``ast.parse`` refuses."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from workers.evaluate.floor.structure import check_floor

from .builders import output
from .realdata import stdlib_source


def _floor(content: str) -> list[tuple[str, str | None]]:
    return [(v.code, v.field) for v in check_floor(output("python", content), None).violations]


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("for x in range(3):\n    pass\nbreak\n", 3),
        ("while True:\n    pass\ncontinue\n", 3),
        ("x = 1\nreturn x\n", 2),
        ("yield 1\n", 1),
        ("def f():\n    nonlocal x\n", 2),
        ("nonlocal x\n", 1),
        ("def f(a):\n    global a\n", 2),
        ("def f():\n    x = 1\n    global x\n", 3),
        ("__debug__ = False\n", 1),
        ('"""Doc."""\nimport os\nfrom __future__ import annotations\n', 3),
        ("from __future__ import braces\n", 1),
        ("await fetch()\n", 1),
        ("def f():\n    await fetch()\n", 2),
        ("async def f():\n    yield 1\n    return 2\n", 3),
        ("def f(a, a):\n    return a\n", 1),
        ("f(a=1, a=2)\n", 1),
        ("*rest = [1, 2]\n", 1),
        ("def f():\n    return [x async for x in y]\n", 2),
    ],
)
def test_what_the_compiler_refuses_is_a_compile_error_with_its_line(
    content: str, line: int
) -> None:
    assert _floor(content) == [("CompileError", f"line {line}")]


@pytest.mark.parametrize(
    "content",
    [
        'PATTERN = "\\d+"\n',  # invalid escape: a DeprecationWarning, not an error
        "x = 1\nif x is 1:\n    x = 2\n",  # SyntaxWarning, not an error
        "async def f(urls):\n    return [await get(u) async for u in urls]\n",
        "from __future__ import annotations\n\ndef f(x: 'int') -> None:\n    return None\n",
    ],
)
def test_code_that_only_warns_passes_even_when_warnings_are_errors(content: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _floor(content) == []


@pytest.mark.parametrize("module", ["argparse.py", "typing.py", "dataclasses.py", "inspect.py"])
def test_real_stdlib_modules_compile(module: str) -> None:
    assert _floor(stdlib_source(module)) == []


def test_compiling_never_runs_the_output() -> None:
    marker = "WINDAGS_FLOOR_RAN"
    content = f"import sys\nprint('{marker}')\nsys.exit(3)\nbreak\n"
    probe = (
        "import sys\nsys.path.insert(0, '.')\n"
        "from schemas.request import NodeOutput, OutputKind\n"
        "from workers.evaluate.floor.structure import check_floor\n"
        f"r = check_floor(NodeOutput(kind=OutputKind.PYTHON, content={content!r}), None)\n"
        "print([str(v.code) for v in r.violations])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert marker not in done.stdout
    assert done.stdout.strip() == "['CompileError']"
