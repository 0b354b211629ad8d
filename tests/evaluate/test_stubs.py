"""Stubs: unimplemented work is found; intentional empty bodies in real code are not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from schemas.quality import Dimension
from schemas.request import OutputContract
from workers.evaluate.findings import score_after
from workers.evaluate.wall.scoring import score_wall
from workers.evaluate.wall.substance import check_substance

from .builders import GOOD_PYTHON, output
from .realdata import stdlib_source


def _codes(content: str, *, task: str | None = None, **contract: Any) -> list[str]:
    parsed = OutputContract.model_validate_json(json.dumps(contract)) if contract else None
    return [
        f.issue.code for f in check_substance(output("python", content), task=task, contract=parsed)
    ]


# Each of these modules has hook methods, abstract methods, overloads, sentinel functions
# or no-op overrides with a ``pass`` / ``...`` / docstring-only body; each is complete.
@pytest.mark.parametrize(
    "module",
    [
        "argparse.py",  # HelpFormatter hooks, _AttributeHolder
        "cmd.py",  # Cmd.emptyline-style hooks overridden by users
        "codecs.py",  # Codec.encode/decode raise NotImplementedError for subclasses
        "enum.py",
        "mailbox.py",  # Mailbox base methods raise NotImplementedError
        "numbers.py",  # ABCs: @abstractmethod everywhere
        "typing.py",  # @overload machinery, _overload_dummy returned as a value
        "types.py",  # def _f(): pass used only for type(_f)
        "uuid.py",  # a deprecated function kept with only its docstring
        "_collections_abc.py",
        "selectors.py",
        "subprocess.py",  # if _mswindows: def _cleanup(): pass / else: a real _cleanup
    ],
)
def test_intentional_empty_bodies_in_real_stdlib_modules_are_not_stubs(module: str) -> None:
    assert "StubBody" not in _codes(stdlib_source(module))


@pytest.mark.parametrize(
    "content",
    [
        "from abc import ABC, abstractmethod\n\n\nclass Store(ABC):\n"
        "    @abstractmethod\n    def get(self, key: str) -> bytes:\n        ...\n",
        "from typing import Protocol\n\n\nclass Sink(Protocol):\n"
        "    def write(self, data: bytes) -> int: ...\n    def close(self) -> None: ...\n",
        "from typing import overload\n\n\n@overload\ndef parse(x: int) -> int: ...\n"
        "@overload\ndef parse(x: str) -> str: ...\ndef parse(x):\n    return x\n",
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    def helper(x: int) -> int: ...\nelse:\n    helper = abs\n",
        "class Base:\n    def run(self) -> None:\n        raise NotImplementedError\n\n"
        "    def describe(self) -> str:\n        return type(self).__name__\n",
        "class Handler:\n    def on_start(self) -> None:\n        pass\n\n"
        "    def on_stop(self) -> None:\n        pass\n\n\n"
        "class Logging(Handler):\n    def on_start(self) -> None:\n        print('start')\n",
        "class ConfigError(Exception):\n    pass\n\n\n"
        "class Config:\n    def __init__(self) -> None:\n        pass\n\n"
        "    def load(self, text: str) -> dict[str, str]:\n"
        "        return dict(line.split('=', 1) for line in text.splitlines())\n",
        "def _noop(*args: object) -> None:\n    pass\n\n\n"
        "def run(callback=_noop) -> None:\n    callback(1)\n",
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_defs(self):\n"
        "        def f1(): pass\n        def f2(a): pass\n        class C:\n"
        "            def m(self): pass\n        self.assertEqual(f2.__code__.co_argcount, 1)\n",
    ],
    ids=[
        "abstract",
        "protocol",
        "overload",
        "type_checking",
        "base_hook",
        "subclassed_hooks",
        "exception_and_init",
        "sentinel",
        "local_dummies",
    ],
)
def test_declared_or_hook_bodies_are_not_stubs(content: str) -> None:
    assert "StubBody" not in _codes(content)


def test_a_function_the_task_names_is_a_stub_even_as_a_method() -> None:
    content = (
        "class Parser:\n    def parse_header(self, raw: bytes) -> dict[str, str]:\n"
        "        raise NotImplementedError\n\n    def name(self) -> str:\n        return 'p'\n"
    )
    assert _codes(content) == []
    assert _codes(content, task="Implement `parse_header` for the HTTP parser.") == ["StubBody"]
    found = check_substance(
        output("python", content), task="Write parse_header(raw) returning the headers."
    )
    assert found[0].issue.field == "parse_header"
    assert score_after(found) <= 0.5  # asked for and missing: the output fails its task


def test_a_function_in_required_fields_is_a_stub_even_as_a_method() -> None:
    content = (
        "class Cache:\n    def get(self, key: str) -> str:\n        ...\n\n"
        "    def size(self) -> int:\n        return 0\n"
    )
    assert _codes(content, required_fields=["get"]) == ["StubBody"]


def test_a_skeleton_class_is_a_stub_though_no_top_level_function_is() -> None:
    content = (
        "class RateLimiter:\n    def __init__(self, rate: float) -> None:\n        pass\n\n"
        "    def allow(self, key: str) -> bool:\n        pass\n\n"
        "    def reset(self, key: str) -> None:\n        pass\n"
    )
    assert _codes(content) == ["StubBody"]


def test_return_none_against_a_value_annotation_is_a_stub() -> None:
    content = (
        "def load(path: str) -> list[dict[str, str]]:\n"
        '    """Load rows."""\n    # TODO: implement\n    return None\n'
    )
    assert _codes(content) == ["StubBody"]
    allowed = "def find(key: str) -> str | None:\n    return None\n"
    assert "StubBody" not in _codes(allowed)


def test_the_penalty_weighs_the_unimplemented_share_of_the_module() -> None:
    one_of_many = (
        GOOD_PYTHON
        + "".join(f"\n\ndef step_{i}(x: int) -> int:\n    return x + {i}\n" for i in range(8))
        + "\n\ndef later(x):\n    pass\n"
    )
    all_stubs = "def a(x):\n    pass\n\n\ndef b(x):\n    pass\n"
    light = check_substance(output("python", one_of_many))
    heavy = check_substance(output("python", all_stubs))
    assert [f.issue.code for f in light] == ["StubBody"]
    assert score_after(heavy) < score_after(light) < 1.0


def test_task_is_read_by_score_wall() -> None:
    content = "class Parser:\n    def parse_header(self, raw):\n        raise NotImplementedError\n"
    assert score_wall(output("python", content)).scores[Dimension.SUBSTANCE] == 1.0
    asked = score_wall(output("python", content), task="Implement `parse_header`.")
    assert asked.scores[Dimension.SUBSTANCE] <= 0.5
