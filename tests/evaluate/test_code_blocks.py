"""Fenced code blocks in markdown and text: each read by its own language's parser.

The never-flagged examples are quoted from real documentation, each named by where it
ships: Node.js's and npm's docs (Debian's nodejs and npm packages), urllib3's notes
(inside the Google Cloud SDK), undici's docs (bundled with npm) and Helm's chart guide.
"""

from __future__ import annotations

import json

import pytest

from schemas.code import BlockStatus, CodeLanguage
from schemas.request import ReviewRequest
from schemas.stages import IssueCode, ViolationCode
from workers.evaluate import run_stage1
from workers.evaluate.code import leniency
from workers.evaluate.code.blocks import read_blocks
from workers.evaluate.code.fences import fenced_blocks


def _request(
    content: str, *, kind: str = "markdown", contract: dict[str, object] | None = None
) -> ReviewRequest:
    raw: dict[str, object] = {
        "dag_id": "d",
        "node_id": "n",
        "skill": {"id": "s", "success_rate": 0.9},
        "output": {"kind": kind, "content": content},
    }
    if contract is not None:
        raw["contract"] = contract
    return ReviewRequest.model_validate_json(json.dumps(raw))


#: The issue's four examples, each as a chat model answers: a sentence, then the code.
FOUR = {
    "python": (
        "from flask import jsonify\n\ndef health():\n    return jsonify({'status': 'ok')\n",
        4,
    ),
    "json": ('{\n  "name": "web",\n  "replicas": 3,\n}\n', 4),
    "yaml": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n spec:\n  replicas: 3\n",
        5,
    ),
    "sql": ("SELECT id, FROM users WHERE;\n", 1),
}


def _answer(tag: str, code: str) -> str:
    return f"Here is the {tag} you asked for.\n\n```{tag}\n{code}```\n\nIt should work as is.\n"


@pytest.mark.parametrize("tag", sorted(FOUR))
def test_the_four_examples_fail_the_wall_with_block_line_and_column(tag: str) -> None:
    code, line = FOUR[tag]
    report = run_stage1(_request(_answer(tag, code)))
    assert report.stage1.floor.passed and not report.stage1.wall.passed
    (issue,) = [i for i in report.stage1.wall.issues if i.code is IssueCode.BROKEN_CODE_BLOCK]
    assert issue.certainty.value == "definite"
    assert issue.position is not None and issue.position.block == 1
    assert issue.position.line == line and issue.position.column >= 1
    assert issue.position.output_line == 3 + line
    assert f"block 1 ({tag}, output line 4), line {line}, column" in issue.message
    (block,) = report.stage1.code_blocks
    assert block.status is BlockStatus.SYNTAX_ERROR and block.language is not None


@pytest.mark.parametrize("tag", sorted(FOUR))
def test_when_the_code_is_the_deliverable_a_broken_block_fails_the_floor(tag: str) -> None:
    code, line = FOUR[tag]
    report = run_stage1(_request(_answer(tag, code), contract={"code_deliverable": True}))
    (violation,) = report.stage1.floor.violations
    assert violation.code is ViolationCode.CODE_BLOCK_SYNTAX_ERROR
    assert violation.position is not None and violation.position.line == line


def test_a_deliverable_with_no_code_block_fails_the_floor() -> None:
    report = run_stage1(_request("I could not write it.\n", contract={"code_deliverable": True}))
    assert [v.code for v in report.stage1.floor.violations] == [ViolationCode.NO_CODE_BLOCK]


def test_the_same_blocks_fixed_pass() -> None:
    fixed = {
        "python": "def health():\n    return jsonify({'status': 'ok'})\n",
        "json": '{"name": "web", "replicas": 3}\n',
        "yaml": "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 3\n",
        "sql": "SELECT id FROM users WHERE active;\n",
    }
    content = "".join(_answer(tag, code) for tag, code in fixed.items())
    report = run_stage1(_request(content))
    assert not [i for i in report.stage1.wall.issues if i.code is IssueCode.BROKEN_CODE_BLOCK]
    assert [b.status for b in report.stage1.code_blocks] == [BlockStatus.PARSED] * 4


def test_fences_are_found_as_commonmark_finds_them() -> None:
    text = "- a list item\n\n  ~~~py\n  x = (\n  ~~~\n\n````json\n```\n````\n```\nuntagged\n```\n"
    blocks = fenced_blocks(text)
    assert [(b.tag, b.start_line, b.body) for b in blocks] == [
        ("py", 4, "x = (\n"),
        ("json", 8, "```\n"),
        ("", 11, "untagged\n"),
    ]
    assert fenced_blocks("no fence at all") == ()


def _readings(markdown: str) -> list[tuple[BlockStatus, str]]:
    return [(r.status, r.note) for r in read_blocks(markdown)]


def test_unknown_and_untagged_blocks_are_listed_unchecked_never_failed() -> None:
    text = (
        "```rust\nfn main() {\n```\n\n```\nthis is not { code\n```\n\n```\n#!/bin/bash\nif\n```\n"
    )
    readings = read_blocks(text)
    assert [r.status for r in readings[:2]] == [BlockStatus.UNCHECKED] * 2
    assert readings[0].note == "no parser for 'rust'"
    assert readings[2].status is BlockStatus.SYNTAX_ERROR  # a shebang makes it certain


# npm's bundled libnpmorg README: the result of a call shown after `=>`.
RESULT_SHOWN = """```js
const org = require('libnpmorg')

console.log(await org.ls('myorg', {token: 'deadbeef'}))
=>
Roster {
  zkat: 'developer',
  iarna: 'admin',
  isaacs: 'owner'
}
```
"""
# urllib3's notes/connection-lifecycle.md: comments stand for the bodies.
COMMENT_BODIES = """```python
if not conn.is_verified:
    # There isn't a verified TLS connection to target origin.
if not conn.proxy_is_verified:
    # There isn't a verified TLS connection to proxy origin.
```
"""
# undici's docs/api/Client.md: a comment stands for a condition.
COMMENT_PLACEHOLDER = """```js
const client = new Client('https://localhost:3000', {
  connect (opts, cb) {
    connector(opts, (err, socket) => {
      if (err) {
        cb(err)
      } else if (/* assertion */) {
        socket.destroy()
        cb(new Error('kaboom'))
      } else {
        cb(null, socket)
      }
    })
  }
})
```
"""
# npm's docs/content/configuring-npm/package-json.md: two documents, each after a comment.
JSON_SEQUENCE = """```json
// Not valid metadata
{
  "license" : {
    "type" : "ISC",
    "url" : "https://opensource.org/licenses/ISC"
  }
}

// Not valid metadata
{
  "licenses" : [
    {
      "type": "MIT",
      "url": "https://www.opensource.org/licenses/mit-license.php"
    }
  ]
}
```
"""
# Node.js's api/fs.md: a console session under a bash tag.
SESSION = """```bash
$ tree .
.
├── mew
└── mewtwo -> ./mew
```
"""
# Node.js's contributing/releases.md: a diff.
DIFF = """```diff
-#define NODE_MINOR_VERSION 12
-#define NODE_PATCH_VERSION 1
+#define NODE_MINOR_VERSION 13
+#define NODE_PATCH_VERSION 0
```
"""
# Helm's chart template guide (getting started): a template, YAML once rendered.
TEMPLATE = """```yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-configmap
data:
  myvalue: "Hello World"
```
"""
# An elided method (the style of every "rest unchanged" answer) and an object literal.
ELIDED = """```js
class Store {
  get (key) {
    // ...
```

```json
{"name": "web", "dependencies": {...}}
```
"""


@pytest.mark.parametrize(
    ("markdown", "status", "note"),
    [
        (RESULT_SHOWN, BlockStatus.UNCHECKED, "code elided on line 3"),
        (COMMENT_BODIES, BlockStatus.PARSED, "a fragment, read as comments standing for bodies"),
        (COMMENT_PLACEHOLDER, BlockStatus.PARSED, "parsed with its elisions"),
        (JSON_SEQUENCE, BlockStatus.PARSED, "read as a sequence of JSON documents"),
        (SESSION, BlockStatus.UNCHECKED, "a console session"),
        (DIFF, BlockStatus.UNCHECKED, "no parser for 'diff'"),
        (TEMPLATE, BlockStatus.UNCHECKED, "a template"),
    ],
)
def test_real_documentation_raises_no_finding(
    markdown: str, status: BlockStatus, note: str
) -> None:
    ((got_status, got_note),) = _readings(markdown)
    assert got_status is status and got_note.startswith(note)
    report = run_stage1(_request("The example:\n\n" + markdown))
    assert not [i for i in report.stage1.wall.issues if i.code is IssueCode.BROKEN_CODE_BLOCK]


def test_elisions_are_not_errors_but_code_before_them_is_checked() -> None:
    assert [s for s, _ in _readings(ELIDED)] == [BlockStatus.UNCHECKED, BlockStatus.UNCHECKED]
    broken_first = "```js\nconst a = {;\n// ...\n```\n"
    assert _readings(broken_first)[0][0] is BlockStatus.SYNTAX_ERROR


@pytest.mark.parametrize(
    ("tag", "fragment", "how"),
    [
        ("python", "    def area(self):\n        return self.w * self.h\n", "dedented"),
        ("js", "name: 'web',\nreplicas: 3,\n", "object members"),
        ("ts", "private items: string[] = []\nget size(): number {\n  return 1\n}\n", "class"),
        ("json", '"name": "web",\n"private": true\n', "object members"),
        # A plugin's options, shown as the chained call they continue.
        ("js", ".register(helmet, options => ({\n  frameguard: false\n}))\n", "continuation"),
        # A tsconfig's compiler options quoted from a longer object, its last comma kept.
        ("json", '"strict": true,\n"esModuleInterop": true,\n', "cut from a longer object"),
        ("xml", "<dependency/>\n<dependency/>\n", "elements without one root"),
        ("sql", "SELECT `id` FROM `users` LIMIT 10\n", "read in the"),
    ],
)
def test_fragments_are_read_as_an_editor_reads_them(tag: str, fragment: str, how: str) -> None:
    ((status, note),) = _readings(f"```{tag}\n{fragment}```\n")
    assert status is BlockStatus.PARSED and how in note


def test_names_a_snippet_does_not_define_are_never_findings() -> None:
    report = run_stage1(_request(_answer("python", "result = compute(data)\nprint(result)\n")))
    assert report.stage1.passed, report.stage1.wall.issues


def test_a_text_output_is_read_the_same_way() -> None:
    report = run_stage1(_request(_answer("json", '{"a": 1,}\n'), kind="text"))
    assert not report.stage1.wall.passed
    assert report.stage1.code_blocks[0].status is BlockStatus.SYNTAX_ERROR


def test_repeated_keys_in_a_json_or_yaml_block_are_definite_findings() -> None:
    report = run_stage1(_request(_answer("yaml", "name: a\nreplicas: 2\nname: b\n")))
    (issue,) = [i for i in report.stage1.wall.issues if i.code is IssueCode.DUPLICATE_KEY]
    assert issue.position is not None and issue.position.line == 3
    assert not report.stage1.wall.passed


def test_a_markdown_output_without_code_lists_no_block() -> None:
    report = run_stage1(_request("# Title\n\nPlain prose, with `inline code` only.\n"))
    assert report.stage1.code_blocks == ()


def test_a_jsonc_block_may_end_a_list_with_a_comma_and_a_json_block_may_not() -> None:
    settings = '{\n  // the editor\'s dictionaries\n  "dictionaries": ["typescript"],\n}\n'
    assert _readings(f"```jsonc\n{settings}```\n")[0][0] is BlockStatus.PARSED
    assert _readings(f"```json\n{settings}```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    # Only a comma of the code goes, and every position stays: a string's is its text.
    assert leniency.in_dialect("jsonc", CodeLanguage.JSON, '["a,]", 1,]') == '["a,]", 1 ]'
    paths = '{"paths": {"app/*": ["src/*", "app/*"],\n  "x": [1 2]}}'
    assert leniency.in_dialect("jsonc", CodeLanguage.JSON, paths) == paths
    assert _readings(f"```jsonc\n{paths}\n```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    assert leniency.in_dialect("json", CodeLanguage.JSON, "[1,]") == "[1,]"


def test_an_argument_marked_optional_as_a_signature_marks_it_is_a_placeholder() -> None:
    # The shape of a path-alias tool's README: its API called with the signature's notation.
    call = "import { rewrite } from 'aliases';\n\nconst run = await rewrite(path, options?);\n"
    ((status, note),) = _readings(f"```ts\n{call}```\n")
    assert status is BlockStatus.PARSED and note.startswith("parsed with its elisions")
    assert _readings(f"```ts\n{call.replace('options?)', 'options?')}```\n")[0][0] is (
        BlockStatus.SYNTAX_ERROR
    )


# The shapes of dev-half READMEs, written anew: an install command, then the REPL; a
# member whose value is a comment.
INSTALL_THEN_REPL = "pip install somepkg\n\n# then, in Python\n>>> import somepkg\n"
DOCTEST = 'def double(x):\n    """Twice x.\n\n    >>> double(2)\n    4\n    """\n    return x * 2\n'
COMMENT_VALUE = (
    "const client = connect({\n  server: false,\n"
    "  caStore: /* PEM certificates, or a store */,\n  cache: {},\n});\n"
)


def test_what_documentation_leaves_in_place_of_code_raises_no_finding() -> None:
    assert _readings(f"```bash\n{INSTALL_THEN_REPL}```\n") == [
        (BlockStatus.UNCHECKED, "a console session")
    ]
    ((status, note),) = _readings(f"```js\n{COMMENT_VALUE}```\n")
    assert status is BlockStatus.PARSED and note.startswith("parsed with its elisions")


def test_code_beside_those_readings_is_still_checked() -> None:
    slipped = DOCTEST.replace("return x * 2", "return (x * 2")
    assert _readings(f"```python\n{slipped}```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    cut_in_docstring = DOCTEST[: DOCTEST.index("    4\n")]  # its doctest now looks like code
    assert _readings(f"```python\n{cut_in_docstring}```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    no_value = COMMENT_VALUE.replace("/* PEM certificates, or a store */", "")
    assert _readings(f"```js\n{no_value}```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    heredoc = "python - <<'EOF'\n>>> import somepkg\nEOF\n"  # the REPL's input, not a session
    assert _readings(f"```bash\n{heredoc}```\n")[0][0] is not BlockStatus.UNCHECKED
    # A document cut off after a comma leaves its bracket open: no quoted fragment, broken.
    cut_off = '[\n  {"name": "web"},\n'
    assert _readings(f"```json\n{cut_off}```\n")[0][0] is BlockStatus.SYNTAX_ERROR


# The shapes of two dev-half READMEs on YAML: an OpenAPI path whose operation's body is
# left out, and a CI workflow whose top is left out, each with a bare ``...``.
YAML_ELIDED_INSIDE = (
    "'/users/{id}':\n  get:\n    ...\n    parameters:\n      - $ref: '#/p/UserId'\n"
)
YAML_ELIDED_TOP = "...\njobs:\n  build:\n    runs-on: ubuntu-latest\n"


def test_a_bare_ellipsis_in_yaml_elides_but_a_document_end_is_yaml() -> None:
    for body in (YAML_ELIDED_INSIDE, YAML_ELIDED_TOP):
        ((status, note),) = _readings(f"```yaml\n{body}```\n")
        assert status is BlockStatus.UNCHECKED and note.startswith("code elided"), body
    ended = "name: web\n...\n"  # the document's end marker
    assert _readings(f"```yaml\n{ended}```\n")[0][0] is BlockStatus.PARSED
    slipped = "name: web\n  replicas: 3\n...\n"  # the error stands before the marker
    assert _readings(f"```yaml\n{slipped}```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    # A help text's own '...' (a block scalar's line) elides nothing after it.
    text = 'help: |\n  {"a": [\n  ...\n  ]}\nname: web\n  replicas: 3\n'
    assert _readings(f"```yaml\n{text}```\n")[0][0] is BlockStatus.SYNTAX_ERROR


# The shapes of three dev-half READMEs, written anew: a config's list with items left out
# (no comma after the ``...``), a ``try`` whose handlers are left out, and a value as
# ``pprint`` shows it (list items without their brackets).
ITEMS_LEFT_OUT = '  // in tsconfig.json\n  "include": [\n    ...\n    "./setup-tests.ts"\n  ],\n'
HANDLERS_LEFT_OUT = (
    "client = Client(token)\n\ntry:\n    for page in client.pages():\n"
    "        print(page)\n    ...\n"
)
PRINTED = "{'id': '1',\n 'name': 'first'},\n {'id': '2',\n 'name': 'second'}\n"
# A linter config's rules, the others left out after the one shown (its comma kept).
RULES_LEFT_OUT = '"rules": {\n  "no-console": ["warn", {"allow": ["error"]}],\n  // ...\n}\n'
# A selector parser's README: what the call returns, after ``~>``.
RETURNS = 'import * as sel from "sel";\n\nsel.parse("a[b]")\n\n~> [\n  { type: "tag" }\n]\n'


def test_items_handlers_and_brackets_documentation_leaves_out_raise_no_finding() -> None:
    ((status, note),) = _readings(f"```json\n{ITEMS_LEFT_OUT}```\n")
    assert status is BlockStatus.PARSED and note.startswith("a fragment"), note
    ((status, note),) = _readings(f"```python\n{HANDLERS_LEFT_OUT}```\n")
    assert status is BlockStatus.PARSED and note.startswith("parsed with its elisions"), note
    ((status, note),) = _readings(f"```python\n{PRINTED}```\n")
    assert (status, note) == (BlockStatus.PARSED, "a fragment, read as an expression")
    ((status, note),) = _readings(f"```json\n{RULES_LEFT_OUT}```\n")
    assert (status, note) == (BlockStatus.PARSED, "a fragment, read as object members")
    ((status, note),) = _readings(f"```js\n{RETURNS}```\n")
    assert status is BlockStatus.UNCHECKED and note.startswith("code elided on line 4"), note


def test_a_slip_beside_what_documentation_leaves_out_is_still_found() -> None:
    two_shown = ITEMS_LEFT_OUT.replace('"include": [', '"include": [\n    "./a.ts"\n    "./b.ts"')
    assert _readings(f"```json\n{two_shown}```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    no_colon = HANDLERS_LEFT_OUT.replace("client.pages():", "client.pages()")
    assert _readings(f"```python\n{no_colon}```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    dropped = PRINTED.replace("'first'}", "'first'")
    assert _readings(f"```python\n{dropped}```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    slip_above = RETURNS.replace('"a[b]")', '"a[b])')
    assert _readings(f"```js\n{slip_above}```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    shown_slip = RULES_LEFT_OUT.replace('"allow": ["error"]}', '"allow": ["error"],}')
    assert _readings(f"```json\n{shown_slip}```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    # ``//~>`` says "the same as" (a colour library's README): it leaves nothing out.
    same_as = "red('a');\n//~> k.red('a');\n\nunderline(red('b');\n"
    assert _readings(f"```js\n{same_as}```\n")[0][0] is BlockStatus.SYNTAX_ERROR
    # A ``...`` that code follows ends nothing: a slip after it is still the code's.
    inside = HANDLERS_LEFT_OUT + "except KeyError:\n    pass\nprint(client.close()\n"
    assert _readings(f"```python\n{inside}```\n")[0][0] is BlockStatus.SYNTAX_ERROR


def test_a_fragments_slip_is_named_where_it_stands_not_at_its_first_line() -> None:
    # Read as a whole document, JSON members stop at their first colon (line 1).
    (reading,) = read_blocks('```json\n"a": 1,\n"b": [1,],\n"c": 2\n```\n')
    assert reading.status is BlockStatus.SYNTAX_ERROR
    assert reading.position is not None and reading.position.line == 2, reading.describe()
    # A file's own failure stands: a wrapper would read its directive as a comment.
    directive = '// licence\n/// <reference no-default-lib="true/>\ninterface A {}\n'
    (reading,) = read_blocks(f"```ts\n{directive}```\n")
    assert reading.position is not None and reading.position.line == 2, reading.describe()
