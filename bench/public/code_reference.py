"""Reference parsers: the bench's own word on whether a text is valid, apart from the engine's.

Each language is judged by the implementation its own tools use, independent of the
engine's parser wherever one is to be had on this machine:

- python: CPython's ``compile`` (the engine uses ``ast.parse`` of the same interpreter);
- json, toml: the standard library (the engine's parser too: the format's reference);
- yaml: PyYAML's pure-Python loader (the engine composes with libyaml's C loader);
- sql: SQLite's own parser (``EXPLAIN`` of the statement in an empty in-memory database:
  a syntax error, incomplete input or an unrecognised token is invalid; a missing table
  is not a syntax question, so it counts as valid);
- javascript: V8, through the machine's Node.js (``vm.Script``, else ``vm.SourceTextModule``);
- typescript: the TypeScript compiler's own parser (``typescript@5`` from the npm
  registry, installed once into the bench cache), its ``parseDiagnostics``;
- shell: ``bash -n``;
- xml: expat (the standard library's; the engine's too);
- html, dockerfile: none here (an HTML document is never invalid to a WHATWG parser, and
  BuildKit's parser is Go): real files are taken as valid, and no mutation is scored.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import tomllib
import warnings
from pathlib import Path
from xml.parsers import expat

import yaml

from bench.public.archives import cache_dir
from schemas.code import CodeLanguage

_L = CodeLanguage
_JS_CHECK = """
const vm = require('vm');
let data = '';
process.stdin.on('data', c => data += c);
process.stdin.on('end', () => {
  const verdicts = JSON.parse(data).map(src => {
    try { new vm.Script(src); return true; } catch (e) {}
    try { new vm.SourceTextModule(src); return true; } catch (e) { return false; }
  });
  process.stdout.write(JSON.stringify(verdicts));
});
"""
_TS_CHECK = """
const ts = require('typescript');
let data = '';
process.stdin.on('data', c => data += c);
process.stdin.on('end', () => {
  const verdicts = JSON.parse(data).map(src => {
    const file = ts.createSourceFile('x.tsx', src, ts.ScriptTarget.Latest, false,
                                     ts.ScriptKind.TSX);
    const plain = ts.createSourceFile('x.ts', src, ts.ScriptTarget.Latest, false,
                                      ts.ScriptKind.TS);
    return file.parseDiagnostics.length === 0 || plain.parseDiagnostics.length === 0;
  });
  process.stdout.write(JSON.stringify(verdicts));
});
"""
TYPESCRIPT_PACKAGE = "typescript@5.9"


def _python(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, "<reference>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


def _json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _yaml(text: str) -> bool:
    try:
        for _ in yaml.compose_all(text, Loader=yaml.SafeLoader):
            pass
    except (yaml.YAMLError, RecursionError):
        return False
    return True


def _toml(text: str) -> bool:
    try:
        tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return False
    return True


def _xml(text: str) -> bool:
    try:
        expat.ParserCreate().Parse(text, True)
    except expat.ExpatError:
        return False
    return True


_SQL_SYNTAX = ("syntax error", "incomplete input", "unrecognized token")


def _sql(text: str) -> bool:
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("EXPLAIN " + text.strip().rstrip(";"))
    except sqlite3.Warning:
        return True  # more than one statement: not a syntax verdict
    except sqlite3.Error as exc:
        return not any(s in str(exc) for s in _SQL_SYNTAX)
    finally:
        connection.close()
    return True


def _shell(text: str) -> bool:
    done = subprocess.run(
        ["bash", "-n"], input=text.encode(), capture_output=True, timeout=30, check=False
    )
    return done.returncode == 0


def _node_dir() -> Path:
    return cache_dir() / "node"


def _node(script: str, texts: list[str], *, modules: bool = False) -> list[bool] | None:
    node = shutil.which("node")
    if node is None:
        return None
    directory = _node_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ("check_ts.js" if "typescript" in script else "check_js.js")
    path.write_text(script)
    flags = ["--experimental-vm-modules", "--no-warnings"] if modules else []
    verdicts: list[bool] = []
    for start in range(0, len(texts), 200):
        done = subprocess.run(
            [node, *flags, str(path)],
            input=json.dumps(texts[start : start + 200]),
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
            cwd=directory,
        )
        verdicts.extend(bool(v) for v in json.loads(done.stdout))
    return verdicts


def typescript_available() -> bool:
    """Install the TypeScript compiler into the bench cache once; whether it is there."""
    directory = _node_dir()
    if (directory / "node_modules" / "typescript").is_dir():
        return True
    npm = shutil.which("npm")
    if npm is None:
        return False
    directory.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(directory), "--no-audit", "--no-fund", TYPESCRIPT_PACKAGE],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return done.returncode == 0


_IN_PROCESS = {
    _L.PYTHON: _python,
    _L.JSON: _json,
    _L.YAML: _yaml,
    _L.TOML: _toml,
    _L.XML: _xml,
    _L.SQL: _sql,
    _L.SHELL: _shell,
}


def reference_valid(language: CodeLanguage, texts: list[str]) -> list[bool | None]:
    """The reference's verdict on each text; None where this language has no reference."""
    check = _IN_PROCESS.get(language)
    if check is not None:
        return [check(t) for t in texts]
    verdicts: list[bool] | None = None
    if language is _L.JAVASCRIPT:
        verdicts = _node(_JS_CHECK, texts, modules=True)
    elif language is _L.TYPESCRIPT and typescript_available():
        verdicts = _node(_TS_CHECK, texts)
    if verdicts is None:
        return [None] * len(texts)
    return list(verdicts)


def reference_name(language: CodeLanguage) -> str:
    """What judged ``language`` in this run."""
    return {
        _L.PYTHON: "CPython compile()",
        _L.JSON: "json (stdlib)",
        _L.YAML: "PyYAML pure-Python SafeLoader",
        _L.TOML: "tomllib (stdlib)",
        _L.XML: "expat (stdlib)",
        _L.SQL: "SQLite's parser (EXPLAIN)",
        _L.SHELL: "bash -n",
        _L.JAVASCRIPT: "V8 (node vm.Script / SourceTextModule)",
        _L.TYPESCRIPT: f"TypeScript compiler parser ({TYPESCRIPT_PACKAGE})",
    }.get(language, "none")
