"""The scripted side of the local Messages API server: replies and recorded exchanges."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class ReplyKind(StrEnum):
    """What the server does with one request."""

    OK = "ok"
    ERROR = "error"
    HANG = "hang"
    MALFORMED = "malformed"
    NO_TOOL = "no_tool"
    TEXT = "text"
    RAW = "raw"


@dataclass(frozen=True)
class Reply:
    """One scripted response; build with the class methods."""

    kind: ReplyKind
    status: int = 200
    error_type: str = ""
    error_code: str | None = None
    """For ERROR: ``error.details.error_code`` (e.g. ``enforced_spend_limit_reached``)."""
    tool_input: Mapping[str, Any] | None = None
    """For OK: the tool input to return verbatim; None derives scores from the request."""
    headers: Mapping[str, str] = field(default_factory=dict)
    latency_s: float | None = None
    """Delay before answering; None uses the server's default latency."""
    body: bytes = b""
    """For RAW: the body sent verbatim with ``status`` (a garbled 200, say)."""
    content_type: str = "application/json"
    """For RAW: the ``content-type`` header."""
    text: str = ""
    """For TEXT: the reply's one text block, verbatim."""
    stop_reason: str = "end_turn"
    """For TEXT: the reply's ``stop_reason`` (``max_tokens`` for a cut reply)."""

    @classmethod
    def ok(
        cls,
        scores: Mapping[str, float] | None = None,
        latency_s: float | None = None,
        justification: str = "scripted evidence",
        *,
        claims: Sequence[Mapping[str, Any]] | None = None,
    ) -> Reply:
        """A valid tool call; ``scores`` by dimension value, else derived from the request.

        ``claims``, when given, is the tool input's per-claim grounding list, verbatim.
        """
        tool_input: dict[str, Any] | None = (
            None
            if scores is None
            else {
                dim: {"score": score, "justification": justification}
                for dim, score in scores.items()
            }
        )
        if tool_input is not None and claims is not None:
            tool_input["claims"] = [dict(c) for c in claims]
        return cls(ReplyKind.OK, tool_input=tool_input, latency_s=latency_s)

    @classmethod
    def malformed(cls, tool_input: Mapping[str, Any] | None = None) -> Reply:
        """A tool call whose input does not validate (default: every score 1.7, no reason)."""
        return cls(ReplyKind.MALFORMED, tool_input=tool_input)

    @classmethod
    def no_tool(cls) -> Reply:
        """A plain text answer with no tool call."""
        return cls(ReplyKind.NO_TOOL)

    @classmethod
    def text_reply(cls, text: str, stop_reason: str = "end_turn") -> Reply:
        """A reply with one text block and no tool call.

        What a server without tool use, or one that ignored ``tool_choice``, sends.
        """
        return cls(ReplyKind.TEXT, text=text, stop_reason=stop_reason)

    @classmethod
    def json_text(
        cls,
        scores: Mapping[str, float],
        justification: str = "scripted evidence",
        *,
        preamble: str = "",
        fenced: bool = False,
        claims: Sequence[Mapping[str, Any]] | None = None,
    ) -> Reply:
        """Scores (and ``claims``, when given) as a JSON object in the text.

        After ``preamble``, fenced if asked.
        """
        verdict: dict[str, Any] = {
            dim: {"score": score, "justification": justification} for dim, score in scores.items()
        }
        if claims is not None:
            verdict["claims"] = [dict(c) for c in claims]
        payload = json.dumps(verdict)
        body = f"```json\n{payload}\n```" if fenced else payload
        return cls.text_reply(f"{preamble}{body}")

    @classmethod
    def error(
        cls,
        status: int,
        error_type: str,
        headers: Mapping[str, str] | None = None,
        error_code: str | None = None,
    ) -> Reply:
        """An Anthropic-shaped error response."""
        return cls(
            ReplyKind.ERROR,
            status=status,
            error_type=error_type,
            headers=dict(headers or {}),
            error_code=error_code,
        )

    @classmethod
    def rate_limited(cls, retry_after_s: float | None = None) -> Reply:
        """429 ``rate_limit_error``, with ``retry-after`` (whole seconds) when given."""
        hdrs = {} if retry_after_s is None else {"retry-after": f"{retry_after_s:g}"}
        return cls.error(429, "rate_limit_error", hdrs)

    @classmethod
    def overloaded(cls) -> Reply:
        """529 ``overloaded_error``."""
        return cls.error(529, "overloaded_error")

    @classmethod
    def server_error(cls) -> Reply:
        """500 ``api_error``."""
        return cls.error(500, "api_error")

    @classmethod
    def bad_request(cls) -> Reply:
        """400 ``invalid_request_error``."""
        return cls.error(400, "invalid_request_error")

    @classmethod
    def raw(cls, body: bytes, content_type: str = "application/json", status: int = 200) -> Reply:
        """Send ``body`` verbatim: a reply that is not JSON, or JSON that is not a message."""
        return cls(ReplyKind.RAW, status=status, body=body, content_type=content_type)

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Reply:
        """Accept the request and stay silent (longer than any client timeout)."""
        return cls(ReplyKind.HANG, latency_s=seconds)


@dataclass
class Exchange:
    """One request the server received, and what it answered."""

    path: str
    headers: dict[str, str]
    """Lower-cased header names."""
    body: dict[str, Any] | None
    """The decoded JSON body; None when it was not JSON."""
    received_at: float = field(default_factory=time.monotonic)
    """``time.monotonic()`` on arrival."""
    status: int = 0
    """0 for a hung request that never got an answer."""
    usage: dict[str, int] | None = None
    """The usage block returned, for OK answers."""
