"""YAML streams, read with PyYAML (its C loader when built): syntax, documents, keys.

Syntax is checked by composing every document of the stream: composing builds nodes
with their positions and acts on no tag. Documents are constructed only for a contract
(JSON Schema, required keys), with a loader that keeps dates as strings (JSON Schema
speaks JSON) and reads any unknown tag (``!Ref``) as the value it tags.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from workers.evaluate.parsed import ParseFailure

if TYPE_CHECKING:
    import yaml

_CACHE_SIZE = 64
#: Most nodes a walk visits: an alias bomb must not make the engine walk forever.
MAX_NODES = 200_000


def _yaml() -> Any:
    import yaml

    return yaml


def _composer() -> Any:
    yaml = _yaml()
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=_CACHE_SIZE)
def yaml_nodes(text: str) -> tuple[yaml.Node, ...] | ParseFailure:
    """The composed root node of every document in the stream, or where it stops parsing."""
    yaml = _yaml()
    try:
        return tuple(n for n in yaml.compose_all(text, Loader=_composer()) if n is not None)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p) or type(exc).__name__
        if mark is None:
            return ParseFailure(message)
        return ParseFailure(message, mark.line + 1, mark.column + 1)
    except yaml.YAMLError as exc:
        return ParseFailure(str(exc).splitlines()[0][:300])
    except RecursionError:
        return ParseFailure("nesting too deep to parse")


def yaml_failure(text: str) -> ParseFailure | None:
    """Where the stream stops parsing, or None."""
    nodes = yaml_nodes(text)
    return nodes if isinstance(nodes, ParseFailure) else None


def walk(roots: tuple[yaml.Node, ...]) -> Iterator[yaml.Node]:
    """Every node once (an alias's target is not walked again), at most ``MAX_NODES``."""
    yaml = _yaml()
    seen: set[int] = set()
    stack = list(reversed(roots))
    while stack and len(seen) < MAX_NODES:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in reversed(node.value) for n in reversed(pair))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))


def _loader() -> type[Any]:
    """A safe loader that leaves dates as strings and reads unknown tags as plain values."""
    return _loader_class()


@lru_cache(maxsize=1)
def _loader_class() -> type[Any]:
    yaml = _yaml()
    base = _composer()

    class _ContractLoader(base):  # type: ignore[misc, valid-type]
        yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {
            first: [(tag, regexp) for tag, regexp in resolvers if not tag.endswith(":timestamp")]
            for first, resolvers in base.yaml_implicit_resolvers.items()
        }

    def _untagged(loader: Any, suffix: str, node: Any) -> Any:
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node)
        return loader.construct_scalar(node)

    _ContractLoader.add_multi_constructor("", _untagged)
    return _ContractLoader


def yaml_documents(text: str) -> list[Any] | ParseFailure:
    """The stream's documents as JSON-like values, for a contract to read.

    Aliases share what they name, so a few lines can stand for billions of nodes (an alias
    bomb): a stream that expands past ``MAX_NODES`` is refused before it is constructed.
    """
    yaml = _yaml()
    roots = yaml_nodes(text)
    if isinstance(roots, ParseFailure):
        return roots
    if _expanded_size(roots) > MAX_NODES:
        return ParseFailure(f"its aliases expand it past {MAX_NODES} nodes")
    try:
        documents = list(yaml.load_all(text, Loader=_loader()))
    except yaml.YAMLError as exc:
        return ParseFailure(str(exc).splitlines()[0][:300])
    except RecursionError:
        return ParseFailure("nesting too deep to parse")
    return [as_json(d) for d in documents]


def _expanded_size(roots: tuple[yaml.Node, ...]) -> int:
    """How many nodes the stream holds once every alias is expanded, counted up to past the cap."""
    yaml = _yaml()
    sizes: dict[int, int] = {}

    def size(node: Any, depth: int) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        if depth > 500:
            return MAX_NODES + 1
        if isinstance(node, yaml.MappingNode):
            inner = sum(size(k, depth + 1) + size(v, depth + 1) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            inner = sum(size(v, depth + 1) for v in node.value)
        else:
            inner = 0
        sizes[id(node)] = min(MAX_NODES + 1, 1 + inner)
        return sizes[id(node)]

    return min(MAX_NODES + 1, sum(size(root, 0) for root in roots))


def as_json(value: Any, depth: int = 0) -> Any:
    """Dates and times as ISO strings, keys as strings where they are scalars: what JSON holds."""
    if depth > 200:
        return None
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, dict):
        return {
            (k if isinstance(k, str) else str(k)): as_json(v, depth + 1) for k, v in value.items()
        }
    if isinstance(value, list):
        return [as_json(v, depth + 1) for v in value]
    return value
