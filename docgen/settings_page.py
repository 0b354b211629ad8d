"""docs/reference/settings.md: every field of ``workers.settings.Settings``, as set.

The environment variable, its type and allowed values, the default and the field's own
docstring (``use_attribute_docstrings``): a setting added to the model is a row on the next
run, and one added without a docstring stops the run.
"""

from __future__ import annotations

import enum
import json
import types
import typing
from typing import Any

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from docgen.markdown import NOTICE, code, prose, table
from workers.settings import ENV_PREFIX, Settings

PAGE = "reference/settings.md"


class UndocumentedSettingError(ValueError):
    """A settings field with no docstring: the page would have nothing to say about it."""


def env_name(field: str) -> str:
    """The environment variable that sets ``field``."""
    return f"{ENV_PREFIX}{field.upper()}"


def type_name(annotation: Any) -> str:
    """How a person writes a value of ``annotation`` in the environment."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return type_name(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        shown = [type_name(a) for a in typing.get_args(annotation) if a is not type(None)]
        return " or ".join(shown) + ", or unset"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " | ".join(code(str(member.value)) for member in annotation)
    if annotation is SecretStr:
        return "secret string"
    if origin is dict:
        return "JSON object"
    if origin in (tuple, list):
        return "comma-separated list"
    if isinstance(annotation, type):
        return {"str": "string", "int": "integer", "float": "number", "bool": "true/false"}.get(
            annotation.__name__, annotation.__name__
        )
    return str(annotation)


def default_text(info: FieldInfo) -> str:
    """The default as it would be written in the environment."""
    if info.default is PydanticUndefined and info.default_factory is None:
        return "required"
    value = info.get_default(call_default_factory=True, validated_data={})
    if value is None:
        return "unset"
    return code(_plain(value))


def _plain(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return json.dumps({k: _jsonable(v) for k, v in value.items()}, separators=(",", ":"))
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value) or '""'
    return str(value)


def _jsonable(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def bounds(info: FieldInfo) -> str:
    """The field's constraints, in words."""
    said = []
    for meta in [*info.metadata, *_inner_metadata(info.annotation)]:
        for kind, attribute, word in (
            (Ge, "ge", ">="),
            (Gt, "gt", ">"),
            (Le, "le", "<="),
            (Lt, "lt", "<"),
        ):
            if isinstance(meta, kind):
                said.append(f"{word} {getattr(meta, attribute)}")
        if isinstance(meta, MinLen):
            said.append(
                "not empty" if meta.min_length == 1 else f"at least {meta.min_length} characters"
            )
        if isinstance(meta, MaxLen):
            said.append(f"at most {meta.max_length} characters")
        if pattern := getattr(meta, "pattern", None):
            said.append(f"matches {code(pattern)}")
    return ", ".join(said)


def _inner_metadata(annotation: Any) -> list[Any]:
    """Constraints written inside an optional type (``Annotated[...] | None``)."""
    found: list[Any] = []
    for arg in typing.get_args(annotation):
        if typing.get_origin(arg) is typing.Annotated:
            found += list(arg.__metadata__)
    return found


def rows() -> list[tuple[str, str, str, str, str]]:
    """One row per setting, in the model's order."""
    out = []
    for name, info in Settings.model_fields.items():
        if not info.description:
            raise UndocumentedSettingError(
                f"Settings.{name} has no docstring: say under the field what it does"
            )
        out.append(
            (
                code(env_name(name)),
                type_name(info.annotation),
                default_text(info),
                bounds(info),
                prose(info.description),
            )
        )
    return out


def render() -> str:
    """The whole page."""
    found = rows()
    lines = [
        NOTICE,
        "# Settings",
        "",
        f"Every setting is an environment variable `{ENV_PREFIX}<NAME>`, read once when a worker,",
        "the review page or a CLI command starts (`workers.settings.load_settings`), never at",
        "import. A bad value stops the process at boot with one line naming the variable; so do",
        "time limits that do not nest (judge timeout x attempts < soft limit < hard limit <",
        "visibility timeout). Workers, clients and subscribers of one fleet must agree on the",
        "Redis URLs and `WINDAGS_KEY_PREFIX`.",
        "",
        f"{len(found)} settings, in the order `workers/settings.py` declares them:",
        "",
        *table(("variable", "type", "default", "allowed", "what it does"), found),
        "",
    ]
    return "\n".join(lines)
