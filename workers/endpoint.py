"""What the judge's Messages API endpoint is: which backend, how it takes tools, its prices.

The hosted API honours a forced tool call and has a price table. Self-hosted servers
(vLLM, llama.cpp's ``llama-server``, Ollama, SGLang, a LiteLLM proxy) serve
``/v1/messages`` too, but may ignore or refuse a forced ``tool_choice``, or tools at all,
and their tokens cost what the operator says (0 allowed). ``workers.settings`` holds the
values; this module holds their types and the pricing rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated

from pydantic import Field

from schemas.judging import ModelPrice
from workers.errors import ConfigurationError

#: A price in USD per million tokens that may be unset: finite, never negative.
OptionalPrice = Annotated[float | None, Field(ge=0.0, allow_inf_nan=False)]


class JudgeBackend(StrEnum):
    """Which judge scores the Ceiling (and the judged parts of the Wall)."""

    AUTO = "auto"
    """Anthropic when an API key is set, else the built-in judge."""
    BUILTIN = "builtin"
    ANTHROPIC = "anthropic"


class ToolUse(StrEnum):
    """How the judge asks the endpoint for its verdict.

    Whatever is asked, a reply without the tool call is read for a JSON object in its text.
    """

    FORCED = "forced"
    """The tool is sent and forced (``tool_choice: tool``): the hosted API."""
    OFFERED = "offered"
    """The tool is sent, not forced (``tool_choice: auto``); the prompt allows JSON text."""
    NONE = "none"
    """No tools are sent: the prompt asks for the JSON object as the whole reply."""


DEFAULT_PRICING: dict[str, ModelPrice] = {
    "claude-haiku-4-5": ModelPrice(
        input_per_mtok=1.0, output_per_mtok=5.0, cache_read_per_mtok=0.1, cache_write_per_mtok=1.25
    ),
    "claude-sonnet-4-5": ModelPrice(
        input_per_mtok=3.0, output_per_mtok=15.0, cache_read_per_mtok=0.3, cache_write_per_mtok=3.75
    ),
}


def endpoint_price(
    input_per_mtok: float | None, output_per_mtok: float | None
) -> ModelPrice | None:
    """The endpoint's price of every model the table does not name; None when unset.

    Cache reads and writes are priced as input: a self-hosted server bills no cache.

    Raises:
        ConfigurationError: one of the two prices is set without the other.
    """
    if input_per_mtok is None and output_per_mtok is None:
        return None
    if input_per_mtok is None or output_per_mtok is None:
        raise ConfigurationError(
            "endpoint_input_price_per_mtok and endpoint_output_price_per_mtok go together: "
            "set both (0 for a self-hosted endpoint) or neither"
        )
    return ModelPrice(
        input_per_mtok=input_per_mtok,
        output_per_mtok=output_per_mtok,
        cache_read_per_mtok=input_per_mtok,
        cache_write_per_mtok=input_per_mtok,
    )


def price_of(
    model: str, table: Mapping[str, ModelPrice], endpoint: ModelPrice | None
) -> ModelPrice:
    """``model``'s price: the table's, else the endpoint's.

    Raises:
        ConfigurationError: ``model`` has neither.
    """
    if model in table:
        return table[model]
    if endpoint is None:
        raise ConfigurationError(
            f"no price for model {model!r} in pricing; for an endpoint of your own set "
            "WINDAGS_ENDPOINT_INPUT_PRICE_PER_MTOK and WINDAGS_ENDPOINT_OUTPUT_PRICE_PER_MTOK "
            "(0 allowed)"
        )
    return endpoint
