"""Idioms of released third-party code (the ``site-packages`` benchmark) read rightly.

Each was a false reject of a real module; each has a twin that is still a defect, so the
check is shown to keep its teeth.
"""

from __future__ import annotations

import ast

import pytest

from workers.evaluate.wall.filler import check_filler
from workers.evaluate.wall.grounding.binder import unbound_names
from workers.evaluate.wall.grounding.stdlib_api import hallucinated_apis
from workers.evaluate.wall.stubs import python_stubs
from workers.evaluate.wall.substance import check_substance

from .builders import output


def _substance_codes(code: str) -> set[str]:
    return {f.issue.code for f in check_substance(output("python", code))}


@pytest.mark.parametrize(
    "code",
    [
        "from .models import Model as Model\nfrom .client import Client as Client\n",
        '"""The public API."""\nfrom ._files import files_from_dir\n',
        "# SPDX-License-Identifier: MIT\n\nfrom attr.converters import *  # noqa: F403\n",
    ],
)
def test_a_module_that_re_exports_is_an_interface_not_thin(code: str) -> None:
    assert "TooThin" not in _substance_codes(code)


def test_a_module_of_a_docstring_and_a_plain_import_is_still_thin() -> None:
    assert "TooThin" in _substance_codes('"""Settings."""\nimport os\nfrom os import path\n')


def test_placeholders_count_where_a_value_belongs_not_in_data_or_docs() -> None:
    data = (
        '"""Lexer keywords; see the TODO list format."""\n'
        "KEYWORDS = ('todo', 'TODO', 'FIXME', 'placeholder')\n"
        "def skip(reason):\n    raise RuntimeError(reason)\n\n"
        "skip('todo: too hard to make this warn')\n"
        "ERROR = 'placeholder too large for max width'\n"
    )
    assert check_filler(output("python", data)) == []
    for value in ('API_KEY = "TODO"\n', 'def f(x="FIXME"):\n    return x\n', 'C = {"k": "TBD"}\n'):
        assert [f.issue.code for f in check_filler(output("python", value))] == ["Filler"], value


def test_prose_that_says_insert_text_is_not_filler() -> None:
    text = "Insert text at a specific line number in a memory file, then save it."
    assert check_filler(output("text", text)) == []
    assert check_filler(output("text", "Summary: [insert summary here].")) != []


@pytest.mark.parametrize(
    "code",
    [
        "import sys\nif sys.version_info >= (3, 13):\n    from warnings import deprecated\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hashlib import _Hash\n",
        "import sys\ndef fmt(info: sys._version_info) -> str:\n    return str(info)\n",
        "from ctypes import windll, WINFUNCTYPE\n",  # defined by ctypes' source on Windows
        "import curses\ndef line(win):\n    win.hline(0, 0, curses.ACS_HLINE, 10)\n",
        "import builtins\nPYPY = False\nif PYPY:\n    T = builtins.sequenceiterator\n",
    ],
)
def test_other_platforms_versions_and_type_only_names_are_not_hallucinated(code: str) -> None:
    assert hallucinated_apis(ast.parse(code)) == []


def test_an_unguarded_invented_api_is_still_hallucinated() -> None:
    code = "import warnings\nimport json\n\nwarnings.deprecated_soon('x')\njson.parse('{}')\n"
    assert [d for _, d in hallucinated_apis(ast.parse(code))] == [
        "warnings.deprecated_soon",
        "json.parse",
    ]


def test_names_probed_with_except_name_error_or_under_a_version_test_are_not_unbound() -> None:
    probe = (
        "def in_notebook():\n    try:\n        get_ipython\n    except NameError:\n"
        "        return False\n    return get_ipython().kernel is not None\n"
    )
    newer = "import sys\nif sys.version_info >= (3, 15):\n    ALLOWED = frozendict\n"
    assert unbound_names(ast.parse(probe)) == []
    assert unbound_names(ast.parse(newer)) == []


def test_a_bare_except_does_not_hide_a_misspelt_name() -> None:
    # HumanEval/124 with ``day`` misspelt ``days``: the bare except swallows the NameError.
    code = (
        "def valid(day):\n    try:\n        if day < 1 or days > 29:\n            return False\n"
        "    except:\n        return False\n    return True\n"
    )
    assert unbound_names(ast.parse(code)) == [(3, "days")]


def test_a_fallback_for_a_missing_dependency_is_not_a_stub() -> None:
    code = (
        "try:\n    from botocore import get_cert_path\nexcept ImportError:\n"
        "    def get_cert_path() -> str:\n"
        '        """Raises NotImplementedError if botocore is not installed."""\n'
        "        raise NotImplementedError('botocore is not installed')\n"
    )
    assert python_stubs(ast.parse(code), set()) == []
    loose = "def get_cert_path() -> str:\n    raise NotImplementedError\n"
    assert python_stubs(ast.parse(loose), set()) != []
