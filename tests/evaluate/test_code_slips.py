"""Broken code or not code at all: a rejected fenced block is judged on its parser's evidence.

Every block below is quoted from documentation shipped with the packages installed on the
machine, all from the dev half of ``bench.public.doc_blocks`` (checked with
``is_held_out`` and ``half_of`` before they were read): the mis-tagged ones as they are,
the broken ones with one slip made in real code, as a model makes it.
"""

from __future__ import annotations

import json

import pytest

from schemas.code import BlockStatus, CodeLanguage
from schemas.request import ReviewRequest
from schemas.stages import IssueCode
from workers.evaluate import run_stage1
from workers.evaluate.code.blocks import MAX_JUDGED_BLOCKS, read_block, read_blocks
from workers.evaluate.code.fences import FencedBlock
from workers.evaluate.code.slips import LONG_BLOCK


def _read(tag: str, language: CodeLanguage, body: str) -> tuple[BlockStatus, str]:
    reading = read_block(FencedBlock(1, tag, language, body, 1))
    return reading.status, reading.note


def _broken_block_issues(tag: str, body: str) -> list[str]:
    content = f"The example:\n\n```{tag}\n{body}```\n"
    request = ReviewRequest.model_validate_json(
        json.dumps(
            {
                "dag_id": "d",
                "node_id": "n",
                "skill": {"id": "s", "success_rate": 0.9},
                "output": {"kind": "markdown", "content": content},
            }
        )
    )
    issues = run_stage1(request).stage1.wall.issues
    return [i.certainty.value for i in issues if i.code is IssueCode.BROKEN_CODE_BLOCK]


# sqlglot's README (its PyPI description): a DataFrame printed, under a python tag.
PROGRAM_OUTPUT = "user_id price\n      1   4.0\n      2   3.0\n"
# sqlglot's README: an error message and a quoted query, under a sql tag.
PROSE = (
    "Argument 'accuracy' is not supported for expression 'ApproxDistinct' when targeting Hive.\n"
    "'SELECT APPROX_COUNT_DISTINCT(a) FROM foo'\n"
)
# npm's docs/content/commands/npm-install.md: a dependency tree, under a bash tag.
ASCII_TREE = "A\n+-- B\n+-- C\n   `-- D@2\n+-- D@1\n"
# npm's npm-install.md: a git URL's grammar, under a bash tag.
GRAMMAR = (
    "<protocol>://[<user>[:<password>]@]<hostname>[:<port>][:][/]<path>"
    "[#<commit-ish> | #semver:<semver>]\n"
)
# Node.js's api/wasi.md: a JavaScript object literal, under a json tag.
JS_OBJECT = "{ wasi_unstable: wasi.wasiImport }\n"
# urllib3's notes/connection-lifecycle.md (inside the Google Cloud SDK): Python, which
# a writer could have tagged bash.
PYTHON_BLOCK = (
    "import urllib3.connection\n\n"
    "# Initialize the HTTPSConnection ('https://...')\n"
    "conn = urllib3.connection.HTTPSConnection(\n"
    '    host="example.com",\n'
    "    # Here you can configure other options like\n"
    "    # 'ssl_minimum_version', 'ca_certs', etc.\n"
    ")\n\n"
    "# Set the connect timeout either in the\n"
    "# constructor above or via the property.\n"
    "conn.timeout = 3.0  # (connect timeout)\n"
)


# A policy tool's README (dev half): a Kubernetes manifest under a bash tag, whose
# annotation's apostrophe bash takes for an open quote (written anew in that shape).
MANIFEST = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations:\n"
    "    policy/skip: CHECK_20=we don't need it here\n"
)


@pytest.mark.parametrize(
    ("tag", "language", "body", "why"),
    [
        ("python", CodeLanguage.PYTHON, PROGRAM_OUTPUT, "not python: its parser stops at line 1"),
        ("sql", CodeLanguage.SQL, PROSE, "not sql: its parser stops at line 1"),
        ("bash", CodeLanguage.SHELL, ASCII_TREE, "not shell: 4 of its 6 commands have no name"),
        ("bash", CodeLanguage.SHELL, GRAMMAR, "not shell: '[#<commit-ish> | #semver:<semver>]'"),
        ("json", CodeLanguage.JSON, JS_OBJECT, "not json: its parser stops at line 1"),
        ("bash", CodeLanguage.SHELL, PYTHON_BLOCK, "not shell: it reads as python"),
        ("bash", CodeLanguage.SHELL, MANIFEST, "not shell: it reads as a YAML mapping of 3"),
    ],
)
def test_a_block_that_is_not_code_in_its_language_is_listed_never_failed(
    tag: str, language: CodeLanguage, body: str, why: str
) -> None:
    status, note = _read(tag, language, body)
    assert status is BlockStatus.UNCHECKED and note.startswith(why), note
    assert _broken_block_issues(tag, body) == []


# Node.js's README: fetching the release keys.
CURL = 'curl -fsLo "/path/to/nodejs-keyring.kbx" "https://github.com/nodejs/release-keys/raw/HEAD/gpg/pubring.kbx"\n'
# urllib3's notes: a request that may fail, a comment standing for the handler's body.
TRY = (
    'try:\n    conn.request("GET", "/")\nexcept BrokenPipeError:\n'
    "    # We can still try to get a response!\n\nresp = conn.getresponse()\n"
)
# npm's docs/content/using-npm/workspaces.md: a package.json.
PACKAGE_JSON = (
    '{\n  "name": "my-workspaces-powered-project",\n  "workspaces": [\n    "packages/a"\n  ]\n}\n'
)
# undici's docs/docs/api/ProxyAgent.md (bundled with npm).
PROXY_AGENT = (
    "import { ProxyAgent } from 'undici'\n\nconst proxyAgent = new ProxyAgent('my.proxy.server')\n"
)


def _slip(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


@pytest.mark.parametrize(
    ("tag", "body"),
    [
        ("python", _slip(PYTHON_BLOCK, ")\n\n#", "\n\n#")),  # a dropped bracket
        ("python", _slip(TRY, "try:", "try")),  # a missing colon
        ("python", _slip(PYTHON_BLOCK, "conn.timeout", " conn.timeout")),  # broken indentation
        ("python", _slip(PYTHON_BLOCK, '"example.com"', '"example.com')),  # unterminated string
        ("python", PYTHON_BLOCK[: PYTHON_BLOCK.index('    host="example.com"')]),  # cut off
        ("json", _slip(PACKAGE_JSON, '"packages/a"', '"packages/a",')),  # a trailing comma
        ("json", _slip(PACKAGE_JSON, '"workspaces":', '"workspaces"')),  # a missing colon
        ("json", _slip(PACKAGE_JSON, "  ]\n", "\n")),  # a dropped bracket
        ("js", _slip(PROXY_AGENT, "'my.proxy.server'", "'my.proxy.server")),
        ("js", _slip(PROXY_AGENT, "server')", "server'")),
        ("bash", _slip(CURL, 'kbx" "https', 'kbx "https')),  # unterminated string
        ("sql", "SELECT APPROX_COUNT_DISTINCT(a FROM foo\n"),  # from PROSE, a dropped bracket
        ("sql", "SELECT APPROX_COUNT_DISTINCT(a), FROM foo\n"),  # a trailing comma
    ],
)
def test_real_code_with_one_slip_stays_a_definite_finding(tag: str, body: str) -> None:
    assert _broken_block_issues(tag, body) == ["definite"]


def test_the_same_real_code_without_the_slip_parses() -> None:
    for tag, body in [
        ("python", PYTHON_BLOCK),
        ("python", TRY),
        ("json", PACKAGE_JSON),
        ("js", PROXY_AGENT),
        ("bash", CURL),
    ]:
        (reading,) = read_blocks(f"```{tag}\n{body}```\n")
        assert reading.status is BlockStatus.PARSED, (tag, reading.note)


def test_past_the_cap_a_rejected_block_is_not_weighed() -> None:
    blocks = "".join(f"```python\n{PROGRAM_OUTPUT}```\n\n" for _ in range(MAX_JUDGED_BLOCKS + 2))
    readings = read_blocks(blocks)
    assert [r.status for r in readings] == [BlockStatus.UNCHECKED] * MAX_JUDGED_BLOCKS + [
        BlockStatus.SYNTAX_ERROR
    ] * 2


# npm's docs/content/configuring-npm/package-json.md: the shorthands a key may take.
ALTERNATIVES = (
    '{\n  "repository": "npm/example",\n\n  "repository": "github:npm/example",\n\n'
    '  "repository": "gist:11081aaa281",\n\n  "repository": "bitbucket:user/repo",\n\n'
    '  "repository": "gitlab:user/repo"\n}\n'
)


def _duplicate_keys(tag: str, body: str) -> int:
    request = ReviewRequest.model_validate_json(
        json.dumps(
            {
                "dag_id": "d",
                "node_id": "n",
                "skill": {"id": "s", "success_rate": 0.9},
                "output": {"kind": "markdown", "content": f"```{tag}\n{body}```\n"},
            }
        )
    )
    issues = run_stage1(request).stage1.wall.issues
    return sum(i.code is IssueCode.DUPLICATE_KEY for i in issues)


def test_a_block_listing_the_values_one_key_may_take_is_no_repeated_key() -> None:
    assert _duplicate_keys("json", ALTERNATIVES) == 0
    assert _duplicate_keys("yaml", "repository: npm/example\nrepository: github:npm/example\n") == 0
    mixed = ALTERNATIVES.replace('"gist:11081aaa281"', '"gist:1", "name": "x"')
    assert _duplicate_keys("json", mixed) == 4


# npm's command synopses (npm/docs/content/commands), tagged bash.
NPM_RUN = "npm run <command> [-- <args>]\n\naliases: run-script, rum, urn\n"
NPM_TOKEN = "npm token list\nnpm token revoke <id|token>\nnpm token create\n"


@pytest.mark.parametrize(
    "body",
    [
        _slip(NPM_RUN, "<args>]", "<args>"),  # a bracket of the synopsis left open
        "npm fund [<package-spec>\n",
        "pg_dump --clean mydb >\n  backup.sql\n",  # bash wants the target on its line
    ],
)
def test_a_shell_slip_that_bash_refuses_is_found_in_a_synopsis_too(body: str) -> None:
    assert _read("bash", CodeLanguage.SHELL, body)[0] is BlockStatus.SYNTAX_ERROR


@pytest.mark.parametrize(
    "body",
    [
        NPM_RUN,
        NPM_TOKEN,
        "npm fund [<package-spec>]\n",
        "pg_dump --clean mydb > \\\n  backup.sql\n",
    ],
)
def test_a_well_formed_synopsis_is_not_a_slip(body: str) -> None:
    assert _read("bash", CodeLanguage.SHELL, body)[0] is BlockStatus.PARSED


# The shape of a typed-schema library's README: a comparison table drawn in box characters
# under a ts tag, longer than a block whose edits are weighed.
_ROW = "│ const T = Type.{0}()  │ type T = {1}  │ const T = {{ type: '{1}' }} │\n"
TABLE = (
    "┌────────────────────────┬───────────────┬────────────────────────────┐\n"
    "│ Builder                │ TypeScript    │ JSON Schema                │\n"
    + "├────────────────────────┼───────────────┼────────────────────────────┤\n".join(
        _ROW.format(name, name.lower()) for name in ["String", "Number", "Boolean", "Null"] * 12
    )
    + "└────────────────────────┴───────────────┴────────────────────────────┘\n"
)
_METHOD = "  area{0}(width: number, height: number): number {{\n    return width * height\n  }}\n"
LONG_PROGRAM = "export class Shapes {\n" + "".join(_METHOD.format(i) for i in range(80)) + "}\n"


def test_a_long_table_drawn_in_symbols_is_not_code_and_a_long_slip_is_broken() -> None:
    assert len(TABLE) > LONG_BLOCK and len(LONG_PROGRAM) > LONG_BLOCK
    status, note = _read("ts", CodeLanguage.TYPESCRIPT, TABLE)
    assert status is BlockStatus.UNCHECKED and note.startswith("not typescript: its parser stops")
    assert _broken_block_issues("ts", TABLE) == []
    assert _read("ts", CodeLanguage.TYPESCRIPT, LONG_PROGRAM)[0] is BlockStatus.PARSED
    broken = _slip(LONG_PROGRAM, "area40(width: number,", "area40(width: number")
    assert _broken_block_issues("ts", broken) == ["definite"]
