"""Keys given twice in one mapping: YAML and JSON parsers keep one value and drop the other.

YAML forbids a repeated key (1.2, section 3.2.1.1) but PyYAML, like most loaders, keeps
the last; JSON's RFC 8259 says names SHOULD be unique and every decoder here keeps the
last too. Either way a reader gets one of two values the writer gave: certain, and
cheap to find. TOML needs no check here: its parser refuses a redefined key outright.
YAML's merge key (``<<``) may repeat by design and is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from schemas.code import CodeLanguage
from workers.evaluate.code.yaml_docs import walk, yaml_nodes
from workers.evaluate.parsed import ParseFailure, json_nodes

#: Most repeated keys reported for one text.
MAX_REPORTED = 10


@dataclass(frozen=True, slots=True)
class RepeatedKey:
    """A key given again in the mapping that already holds it."""

    key: str
    where: str
    """A JSON path (``$.spec.replicas``) or the mapping's first line (YAML)."""
    line: int | None = None
    column: int | None = None
    alternatives: bool = False
    """Every member of its mapping has this one key: documentation listing the values a
    key may take (``"repository": "npm/x"``, then ``"repository": "github:npm/x"``)."""


def repeated_keys(language: CodeLanguage, text: str) -> list[RepeatedKey]:
    """Repeated keys of a JSON document or of every document of a YAML stream."""
    if language is CodeLanguage.YAML:
        return _yaml(text)
    if language is CodeLanguage.JSON:
        return _json(text)
    return []


class _Pairs(dict[str, Any]):
    """A decoded JSON object that remembers which of its names came twice."""

    repeated: tuple[str, ...] = ()
    alternatives: bool = False


def _pairs(pairs: list[tuple[str, Any]]) -> _Pairs:
    found = _Pairs(pairs)
    if len(found) < len(pairs):
        seen: set[str] = set()
        repeated: list[str] = []
        for key, _ in pairs:
            if key in seen:
                repeated.append(key)
            seen.add(key)
        found.repeated = tuple(repeated)
        found.alternatives = len(found) == 1
    return found


def _json(text: str) -> list[RepeatedKey]:
    try:
        document = json.loads(text, object_pairs_hook=_pairs)
    except (ValueError, RecursionError):
        return []
    return [
        RepeatedKey(key, path, alternatives=value.alternatives)
        for path, value in json_nodes(document, max_depth=200)
        if isinstance(value, _Pairs)
        for key in value.repeated
    ][:MAX_REPORTED]


def _yaml(text: str) -> list[RepeatedKey]:
    import yaml

    roots = yaml_nodes(text)
    if isinstance(roots, ParseFailure):
        return []
    found: list[RepeatedKey] = []
    for node in walk(roots):
        if not isinstance(node, yaml.MappingNode):
            continue
        seen: set[tuple[str, str]] = set()
        one_key = len({(k.tag, k.value) for k, _ in node.value if isinstance(k, yaml.ScalarNode)})
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                continue
            name = (key.tag, key.value)
            if name in seen:
                mark = key.start_mark
                found.append(
                    RepeatedKey(
                        key.value,
                        f"line {node.start_mark.line + 1}",
                        mark.line + 1,
                        mark.column + 1,
                        alternatives=one_key == 1,
                    )
                )
            seen.add(name)
        if len(found) >= MAX_REPORTED:
            break
    return found[:MAX_REPORTED]
