"""The Messages API judge: one structured call per task, validated, costed.

It speaks to the hosted API or to any server of ``/v1/messages`` (vLLM, llama.cpp,
Ollama, SGLang, a LiteLLM proxy): ``settings.judge_tool_use`` says whether the tool call
is forced, offered, or not sent at all, and a reply without the tool call is read for a
JSON object in its text. The SDK's retries are off and its timeout is ours, so
``retry.call_with_retry`` is the only retry layer. A reply that does not validate gets one
repair turn quoting the validation error, then fails as ``JudgeOutputError``: a judge that
cannot answer never invents a score.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import cycle
from types import TracebackType
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message

from schemas.judging import (
    DimensionVerdict,
    JudgeTask,
    JudgeTier,
    JudgeVerdict,
    TokenUsage,
    VerdictParse,
)
from schemas.quality import Dimension
from workers.endpoint import ToolUse
from workers.errors import ConfigurationError, JudgeOutputError
from workers.judges import prompt
from workers.judges.asking import wants_claims
from workers.judges.green import unpatch_idle_checks
from workers.judges.reply import read_reply, read_verdict
from workers.judges.retry import RetryPolicy, call_with_retry, checked_message
from workers.settings import Settings

#: HTTP connection pools the calls take turns on. httpcore walks every connection of its
#: pool twice per request (assigning it, then releasing its connection) and probes each
#: idle one with a poll: with a hundred calls in flight on one pool those walks were a
#: tenth of a gevent Stage 1 worker's CPU (py-spy, ``bench.stage1_io``), and they grow with
#: the concurrency. Spread over this many pools, each walk is over a few connections.
HTTP_POOLS = 16


def parse_scores(
    reply: Message, dimensions: Sequence[Dimension]
) -> dict[Dimension, DimensionVerdict]:
    """The verdict in ``reply`` (its tool call, else JSON in its text), or ``JudgeOutputError``."""
    return read_verdict(reply, dimensions)[0]


def usage_of(reply: Message) -> TokenUsage:
    """Our usage record of one reply."""
    u = reply.usage
    return TokenUsage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_input_tokens=u.cache_read_input_tokens or 0,
        cache_creation_input_tokens=u.cache_creation_input_tokens or 0,
    )


class AnthropicJudge:
    """Scores a task's dimensions with one structured Messages API call.

    Args:
        settings: models, key, base URL, timeout, temperature, pricing.
        policy: retry policy; defaults to attempts and budget from ``settings``.
        max_connections: size of each HTTP connection pool (``HTTP_POOLS`` of them, taken
            in turn), at least the thread count.
    """

    def __init__(
        self, settings: Settings, policy: RetryPolicy | None = None, max_connections: int = 256
    ) -> None:
        if settings.anthropic_api_key is None:
            raise ConfigurationError("the anthropic judge needs anthropic_api_key")
        self._models = {
            JudgeTier.WALL: settings.stage1_model,
            JudgeTier.CEILING: settings.stage2_model,
            JudgeTier.PAIRWISE: settings.stage2_model,
        }
        self._prices = {m: settings.price_of(m) for m in set(self._models.values())}
        self._settings = settings
        self._tool_use = settings.judge_tool_use
        temperature = settings.judge_temperature
        # This SDK version takes no temperature argument; the API still reads it.
        self._sampling: dict[str, float] = (
            {} if temperature is None else {"temperature": temperature}
        )
        self._policy = policy or RetryPolicy.from_settings(settings)
        unpatch_idle_checks()
        limits = httpx2.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        )
        key = settings.anthropic_api_key.get_secret_value()
        self._clients = tuple(
            anthropic.Anthropic(
                api_key=key,
                base_url=settings.anthropic_base_url,
                timeout=settings.judge_timeout_s,
                max_retries=0,
                http_client=anthropic.DefaultHttpxClient(
                    limits=limits, timeout=settings.judge_timeout_s
                ),
            )
            for _ in range(HTTP_POOLS)
        )
        self._turns = cycle(self._clients)  # next() on a cycle is atomic under the GIL

    def model_for(self, tier: JudgeTier) -> str:
        """The model that answers ``tier``: cheap for the Wall, strong otherwise."""
        return self._models[tier]

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        """Score ``task.dimensions``; retries transient faults, repairs one bad reply."""
        model = self.model_for(task.tier)
        tool = prompt.score_tool(
            task.dimensions, task.tier is JudgeTier.PAIRWISE, claims=wants_claims(task)
        )
        messages = prompt.initial_messages(task, self._tool_use)
        usage, calls = TokenUsage(), 0
        first_error: str | None = None
        for repair in (False, True):
            reply, made = self._create(model, tool, messages)
            usage, calls = usage + usage_of(reply), calls + made
            try:
                reading = read_reply(reply, task.dimensions)
            except JudgeOutputError as exc:
                if repair:
                    raise JudgeOutputError(
                        f"{model}: no valid verdict after a corrective retry: {exc}",
                        input_tokens=usage.input_tokens,
                        output_tokens=usage.output_tokens,
                        calls=calls,
                        cost_usd=self._prices[model].cost(usage),
                        cache_read_input_tokens=usage.cache_read_input_tokens,
                        cache_creation_input_tokens=usage.cache_creation_input_tokens,
                    ) from exc
                first_error = str(exc)
                messages = prompt.corrective_messages(
                    task, reply.content, first_error, self._tool_use
                )
                continue
            return JudgeVerdict(
                model=model,
                scores=reading.scores,
                usage=usage,
                cost_usd=self._prices[model].cost(usage),
                calls=calls,
                parse=VerdictParse(
                    form=reading.form, repaired=repair, first_error=_clipped(first_error)
                ),
                claims=reading.claims,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _create(
        self,
        model: str,
        tool: anthropic.types.ToolParam,
        messages: list[anthropic.types.MessageParam],
    ) -> tuple[Message, int]:
        """One logical call under the retry policy, with the HTTP calls it took."""
        made = 0
        tooling = self._tooling(tool)

        def once() -> Message:
            nonlocal made
            made += 1
            reply = next(self._turns).messages.create(
                model=model,
                max_tokens=self._settings.judge_max_tokens,
                system=prompt.system_blocks(self._tool_use),
                messages=messages,
                # SDK 1.x+ dropped sampling keywords from the signature; the API takes it.
                extra_body=self._sampling,
                **tooling,
            )
            return checked_message(reply)  # a garbled 200 is retried, never parsed

        return call_with_retry(self._policy, once), made

    def _tooling(self, tool: anthropic.types.ToolParam) -> dict[str, Any]:
        """The ``tools`` and ``tool_choice`` arguments the endpoint's tool use allows."""
        if self._tool_use is ToolUse.NONE:
            return {}
        choice: anthropic.types.ToolChoiceParam = (
            {"type": "tool", "name": prompt.TOOL_NAME}
            if self._tool_use is ToolUse.FORCED
            else {"type": "auto"}
        )
        return {"tools": [tool], "tool_choice": choice}

    def close(self) -> None:
        """Close the HTTP connection pools."""
        for client in self._clients:
            client.close()

    def __enter__(self) -> AnthropicJudge:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _clipped(error: str | None, limit: int = 1000) -> str | None:
    """``error`` within ``VerdictParse.first_error``'s length."""
    if error is None or len(error) <= limit:
        return error
    return error[: limit - 3] + "..."
