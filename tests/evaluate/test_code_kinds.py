"""The eight new output kinds: a Floor each, with a typed violation and its position."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from schemas.request import NodeOutput, OutputContract, OutputKind
from schemas.stages import IssueCode, ViolationCode
from workers.evaluate import check_floor, score_wall

ROOT = Path(__file__).resolve().parents[2]

#: kind -> (a valid output, a broken one, the violation, the line the parser stops on)
CASES: dict[OutputKind, tuple[str, str, ViolationCode, int]] = {
    OutputKind.YAML: (
        "a: 1\n---\nb: [1, 2]\n",
        "a: 1\n---\nb: [1, 2\nc: 3\n",
        ViolationCode.YAML_ERROR,
        4,
    ),
    OutputKind.TOML: (
        '[tool]\nname = "x"\n',
        '[tool]\nname = "x\n',
        ViolationCode.TOML_DECODE_ERROR,
        2,
    ),
    OutputKind.JAVASCRIPT: (
        "export const f = (a) => ({ a, ...rest });\n",
        "export const f = (a) => {\n  return [a;\n};\n",
        ViolationCode.JAVASCRIPT_SYNTAX_ERROR,
        2,
    ),
    OutputKind.TYPESCRIPT: (
        "export function f<T>(x: T): T[] {\n  return [x];\n}\n",
        "export function f<T>(x: T): T[] {\n  return [x;\n}\n",
        ViolationCode.TYPESCRIPT_SYNTAX_ERROR,
        2,
    ),
    OutputKind.SHELL: (
        '#!/bin/sh\nfor arg do\n  echo "$arg"\ndone\n',
        "#!/bin/bash\nif [ -f x ]; then\n  echo yes\n",
        ViolationCode.SHELL_SYNTAX_ERROR,
        4,
    ),
    OutputKind.HTML: (
        "<!doctype html><p>a > b & c<ul><li>one<li>two</ul>",
        '<p class="note>unclosed attribute</p>\n',
        ViolationCode.HTML_SYNTAX_ERROR,
        1,
    ),
    OutputKind.XML: (
        '<?xml version="1.0"?>\n<a><b/></a>\n',
        "<a>\n  <b></a>\n",
        ViolationCode.XML_SYNTAX_ERROR,
        2,
    ),
    OutputKind.DOCKERFILE: (
        'FROM python:3.11-slim\nRUN pip install x\nCMD ["python"]\n',
        'FROM python:3.11-slim\nCMD ["python"\n',
        ViolationCode.DOCKERFILE_SYNTAX_ERROR,
        2,
    ),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_new_kind_has_a_floor_with_a_typed_violation_and_its_position(
    kind: OutputKind,
) -> None:
    good, bad, code, line = CASES[kind]
    assert check_floor(NodeOutput(kind=kind, content=good), None).passed
    floor = check_floor(NodeOutput(kind=kind, content=bad), None)
    (violation,) = floor.violations
    assert violation.code is code
    assert violation.position is not None and violation.position.line == line
    assert violation.position.block is None
    assert f"line {line}" in violation.message


def test_shell_errors_are_bash_n_level_only() -> None:
    # tree-sitter-bash rejects both; bash reads the first, so only the second is an error.
    valid = 'res=0\nfor i do\n  case "$i" in\n    -*) ;;\n  esac\ndone\n'
    assert check_floor(NodeOutput(kind=OutputKind.SHELL, content=valid), None).passed
    unclosed = 'for i in 1 2\ndo\n  echo "$i\n'
    if shutil.which("bash") is not None:
        floor = check_floor(NodeOutput(kind=OutputKind.SHELL, content=unclosed), None)
        assert "unexpected EOF" in floor.violations[0].message


@pytest.mark.parametrize(
    "page",
    [
        "<p>Retry while attempts < 3 and delay <= 10 s.</p>\n",
        # a server-side template's condition, as a template engine ships its pages
        "<table>\n  {% if page < 1 %}{% set page = 1 %}{% endif %}\n"
        "  <tr><td>x</td></tr>\n</table>\n",
        # Django's admin and forms templates: template tags in tags and attribute values
        '<link rel="stylesheet" href="{% static "admin/css/forms.css" %}">\n'
        '<li{% if forloop.last %} class="last"{% endif %}>{{ entry }}</li>\n',
        "{% if use_tag %}<{{ tag }}{% include 'attrs.html' %}>{{ label }}</{{ tag }}>"
        "{% else %}{{ label }}{% endif %}\n",
    ],
)
def test_a_bare_less_than_and_template_tags_are_html_as_a_browser_reads_it(page: str) -> None:
    # `<` before a space, a digit or `=` starts no tag: a browser shows it as text; a
    # template's tags are filled in as rendering fills them.
    assert check_floor(NodeOutput(kind=OutputKind.HTML, content=page), None).passed
    for broken in ('<p class="note"\n<b>x</b></p>\n', '<a href="{{ url }}>{{ name }}</a>\n'):
        assert not check_floor(NodeOutput(kind=OutputKind.HTML, content=broken), None).passed


SCHEMA = {
    "type": "object",
    "required": ["kind"],
    "properties": {"kind": {"enum": ["Deployment", "Service"]}, "created": {"type": "string"}},
}


def test_a_yaml_schema_applies_to_every_document_of_the_stream() -> None:
    stream = "kind: Deployment\ncreated: 2024-01-01\n---\nkind: Pod\n---\nname: x\n"
    contract = OutputContract(json_schema=SCHEMA, required_fields=("kind",))
    floor = check_floor(NodeOutput(kind=OutputKind.YAML, content=stream), contract)
    messages = [v.message for v in floor.violations]
    assert any(m.startswith("document 2: 'Pod' is not one of") for m in messages)
    assert "document 3: 'kind' is a required property" in messages
    assert "document 3: required field 'kind' is absent" in messages
    assert not any(m.startswith("document 1") for m in messages)  # a date stays a string


def test_a_toml_document_meets_its_contract_or_names_what_is_missing() -> None:
    contract = OutputContract(required_fields=("project.name", "project.version"))
    content = '[project]\nname = "demo"\n'
    floor = check_floor(NodeOutput(kind=OutputKind.TOML, content=content), contract)
    assert [v.field for v in floor.violations] == ["project.version"]
    bounded = OutputContract(max_length=10)
    assert not check_floor(NodeOutput(kind=OutputKind.TOML, content=content), bounded).passed


def test_toml_refuses_a_repeated_key_itself() -> None:
    floor = check_floor(NodeOutput(kind=OutputKind.TOML, content="a = 1\na = 2\n"), None)
    assert floor.violations[0].code is ViolationCode.TOML_DECODE_ERROR
    assert floor.violations[0].position is not None


@pytest.mark.parametrize(
    ("kind", "content", "where"),
    [
        (OutputKind.JSON, '{"spec": {"replicas": 2, "replicas": 3}}', "$.spec"),
        (OutputKind.YAML, "spec:\n  replicas: 2\n  replicas: 3\n", "line 2"),
    ],
)
def test_a_repeated_key_is_a_definite_wall_finding(
    kind: OutputKind, content: str, where: str
) -> None:
    (found,) = [
        f
        for f in score_wall(NodeOutput(kind=kind, content=content)).findings
        if f.issue.code is IssueCode.DUPLICATE_KEY
    ]
    assert found.issue.certainty.value == "definite" and where in found.issue.message


def test_yaml_merge_keys_are_not_repeated_keys() -> None:
    content = "base: &b {a: 1}\nuse:\n  <<: *b\n  c: 2\n"
    findings = score_wall(NodeOutput(kind=OutputKind.YAML, content=content)).findings
    assert not [f for f in findings if f.issue.code is IssueCode.DUPLICATE_KEY]


@pytest.mark.parametrize(
    ("content", "missing"),
    [
        ("# syntax=docker/dockerfile:1\nARG V=3.11\nFROM python:${V}\nRUN true\n", False),
        ("RUN apt-get update\nFROM debian\n", True),
        ("# only a comment\nARG V=1\n", True),
    ],
)
def test_a_dockerfile_must_start_from_a_base_image(content: str, missing: bool) -> None:
    findings = score_wall(NodeOutput(kind=OutputKind.DOCKERFILE, content=content)).findings
    codes = [f.issue.code for f in findings]
    assert (IssueCode.MISSING_FROM in codes) is missing


def test_the_wire_schema_lists_the_new_kinds() -> None:
    schema = json.loads((ROOT / "schemas/json/review_request.schema.json").read_text())
    kinds = set(schema["$defs"]["OutputKind"]["enum"])
    assert {"yaml", "toml", "javascript", "typescript", "shell", "html", "xml", "dockerfile"} <= (
        kinds
    )


def test_an_output_without_code_loads_no_parser_package() -> None:
    probe = (
        "import sys, json\n"
        "from schemas.request import ReviewRequest\n"
        "from workers.evaluate import run_stage1\n"
        "raw = {'dag_id': 'd', 'node_id': 'n', 'skill': {'id': 's', 'success_rate': 0.9},\n"
        "       'output': {'kind': 'markdown', 'content': '# Notes\\n\\nNo code here.'}}\n"
        "run_stage1(ReviewRequest.model_validate_json(json.dumps(raw)))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "      ('yaml', 'tree_sitter', 'tree_sitter_javascript', 'tree_sitter_bash'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_an_alias_bomb_is_refused_before_it_is_expanded() -> None:
    levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    bomb = "\n".join(levels) + "\n"
    contract = OutputContract(json_schema={"type": "object"})
    floor = check_floor(NodeOutput(kind=OutputKind.YAML, content=bomb), contract)
    assert [v.code for v in floor.violations] == [ViolationCode.CONTRACT_UNUSABLE]
    assert "past 200000 nodes" in floor.violations[0].message


def test_only_the_first_hundred_blocks_of_an_output_are_parsed() -> None:
    from schemas.code import BlockStatus
    from workers.evaluate.code.blocks import read_blocks

    readings = read_blocks("```sql\nSELECT a, FROM t\n```\n" * 150)
    assert [r.status for r in readings[:100]] == [BlockStatus.SYNTAX_ERROR] * 100
    assert {r.note for r in readings[100:]} == {"past the first 100 blocks"}
