"""docs/reference/wire/: one page per JSON Schema in ``schemas/json/``, and their index.

The schemas are the contract the DAG runtime and subscribers hold (``make schemas`` writes
them from the pydantic models, a test keeps them fresh); these pages read the same files, so
a model, field or enum value added to the wire is on the site after the next run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docgen.markdown import NOTICE, code, prose, table
from schemas.export import JSON_DIR

FOLDER = "reference/wire"
SUFFIX = ".schema.json"

Schema = Mapping[str, Any]


def schemas(directory: Path = JSON_DIR) -> dict[str, Schema]:
    """Every schema file's stem (``review_request``) and its JSON, by name."""
    return {
        path.name.removesuffix(SUFFIX): json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(directory.glob(f"*{SUFFIX}"))
    }


def type_of(node: Schema) -> str:
    """A property's type in words, with a link to the definition it refers to."""
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in node:
        kinds = [type_of(option) for option in node["anyOf"]]
        return " or ".join(k for k in kinds if k != "null") + (
            ", or null" if "null" in kinds else ""
        )
    if "enum" in node:
        return " | ".join(code(json.dumps(value)) for value in node["enum"])
    if "const" in node:
        return code(json.dumps(node["const"]))
    kind = node.get("type")
    if kind == "array":
        return f"list of {type_of(node.get('items', {}))}"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"map of string to {type_of(node['additionalProperties'])}"
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind is None:
        return "any JSON value" if node in ({}, True) else "object"
    return str(kind) if kind != "boolean" else "true/false"


#: JSON Schema's bounds, in words: keyword -> how the page says it.
BOUNDS = {
    "minimum": ">= {}",
    "exclusiveMinimum": "> {}",
    "maximum": "<= {}",
    "exclusiveMaximum": "< {}",
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "pattern": "matches `{}`",
}


def bounds(node: Schema) -> str:
    """The node's constraints, its options' and its items' too, in words."""
    said = [text.format(node[key]) for key, text in BOUNDS.items() if key in node]
    for option in node.get("anyOf", []):
        said += [bounds(option)] if bounds(option) else []
    if isinstance(node.get("items"), dict) and "$ref" not in node["items"]:
        inner = bounds(node["items"])
        said += [f"each {inner}"] if inner else []
    return ", ".join(said)


def fields(schema: Schema) -> list[str]:
    """The table of an object's properties, or the values of an enum."""
    if "enum" in schema:
        return ["Values: " + ", ".join(code(json.dumps(v)) for v in schema["enum"]) + ".", ""]
    properties: Mapping[str, Schema] = schema.get("properties", {})
    if not properties:
        return [f"Type: {type_of(schema)}.", ""]
    required = set(schema.get("required", []))
    rows = [
        (
            code(name),
            type_of(node),
            "required" if name in required else _default(node),
            bounds(node),
            prose(node.get("description")),
        )
        for name, node in properties.items()
    ]
    closed = schema.get("additionalProperties") is False
    note = ["Unknown fields are refused." if closed else "Other fields are allowed.", ""]
    return [*table(("field", "type", "default", "allowed", "meaning"), rows), "", *note]


def _default(node: Schema) -> str:
    if "default" not in node:
        return "optional"
    return code(json.dumps(node["default"], separators=(",", ":")))


def page(stem: str, schema: Schema) -> str:
    """One schema's page: the model, then each definition it refers to."""
    title = str(schema.get("title", stem))
    lines = [
        NOTICE,
        f"# {title}",
        "",
        prose(schema.get("description")),
        "",
        f"JSON Schema: [`schemas/json/{stem}{SUFFIX}`](../../../schemas/json/{stem}{SUFFIX}).",
        "",
        *fields(schema),
    ]
    for name, definition in sorted(schema.get("$defs", {}).items()):
        lines += [f"## {name}", "", prose(definition.get("description")), "", *fields(definition)]
    return "\n".join(lines).rstrip("\n") + "\n"


def index(found: Mapping[str, Schema]) -> str:
    """The wire reference's landing page, with the pages in its table of contents."""
    rows = [
        (f"[{schema.get('title', stem)}]({stem}.md)", prose(schema.get("description")))
        for stem, schema in found.items()
    ]
    lines = [
        NOTICE,
        "# The wire contract",
        "",
        "What the DAG runtime sends (`ReviewRequest`, `DagShape`) and what its stream carries",
        "(`ReviewResult`, `ReviewError`, a person's `HumanVerdict` and the `HumanDecision`",
        "recomputed with it), one page per JSON Schema of `schemas/json/`. Unknown fields and",
        "ill-typed values are refused with an error that names the field.",
        "",
        *table(("model", "what it is"), rows),
        "",
        "```{toctree}",
        ":hidden:",
        "",
        *found,
        "```",
    ]
    return "\n".join(lines) + "\n"


def render() -> dict[str, str]:
    """Every page of the folder, by its path under ``docs/``."""
    found = schemas()
    pages = {f"{FOLDER}/{stem}.md": page(stem, schema) for stem, schema in found.items()}
    return {f"{FOLDER}/index.md": index(found), **pages}
