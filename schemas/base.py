"""The base every wire model shares: closed, frozen, strict, finite."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

#: A probability or score: finite and within 0..1.
Unit = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
#: A non-negative amount of US dollars.
Usd = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
#: A non-negative finite number.
NonNegative = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
#: An identifier safe to embed in a Redis key: no spaces, colons are allowed.
Identifier = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:@/\-]+$")]


class WireModel(BaseModel):
    """Frozen, strict, closed: unknown fields and ill-typed values are errors.

    Strict mode refuses silent coercion ("0.9" for 0.9, 1 for True). Enum values from
    JSON text are accepted by value; decode wire input with ``model_validate_json``.
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        use_attribute_docstrings=True,
        populate_by_name=True,
    )
