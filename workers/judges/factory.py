"""Pick the judge backend once, at boot, and say why."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from workers.errors import ConfigurationError
from workers.judges.base import Judge
from workers.settings import JudgeBackend, Settings

if TYPE_CHECKING:  # the SDK is imported only when the Anthropic backend is chosen
    from workers.judges.retry import RetryPolicy

log = logging.getLogger("windags.judges")


def build_judge(settings: Settings, policy: RetryPolicy | None = None) -> Judge:
    """The Anthropic judge when asked for or when ``auto`` finds a key; else the built-in.

    Raises:
        ConfigurationError: ``anthropic`` was asked for but no API key is set.
    """
    backend = settings.judge_backend
    if backend is JudgeBackend.ANTHROPIC and not _has_key(settings):
        raise ConfigurationError("judge_backend=anthropic needs anthropic_api_key")
    if calls_a_model(settings):
        from workers.judges.anthropic_judge import AnthropicJudge

        why = "configured" if backend is JudgeBackend.ANTHROPIC else "auto: an API key is set"
        log.info(
            "judge backend: anthropic (%s; wall=%s, ceiling=%s)",
            why,
            settings.stage1_model,
            settings.stage2_model,
        )
        return AnthropicJudge(settings, policy)
    from workers.judges.builtin import BuiltinJudge

    why = "configured" if backend is JudgeBackend.BUILTIN else "auto: no API key set"
    log.info("judge backend: builtin (%s)", why)
    judge: Judge = BuiltinJudge()
    return judge


def calls_a_model(settings: Settings) -> bool:
    """Whether ``build_judge`` picks a model judge: workers then wait on the network."""
    backend = settings.judge_backend
    return backend is JudgeBackend.ANTHROPIC or (
        backend is JudgeBackend.AUTO and _has_key(settings)
    )


def _has_key(settings: Settings) -> bool:
    key = settings.anthropic_api_key
    return key is not None and bool(key.get_secret_value())
