"""What makes a deployment a demo's: its key prefix, and keys that expire within the hour.

``windags-eval demo`` writes under ``<prefix>-demo``. Its fleet writes every key with
``DEMO_TTL_S`` of life (results, review keys, attempts, queue items, outcomes, Stage 2
claims); the commands it prints (``verdict``, ``review-ui``, ``outcomes report``) name
that prefix, and any command run with a prefix ending in ``-demo`` writes with the same
lifetimes, so that a verdict recorded on a demo node does not outlive the demo's data.
"""

from __future__ import annotations

from workers.settings import Settings

#: How long the demo's data stays in Redis.
DEMO_TTL_S = 3600
#: Appended to the configured key prefix: the demo never mixes with real reviews.
DEMO_SUFFIX = "-demo"
#: The settings that give each key its lifetime.
DEMO_LIFETIMES = ("stream_retention_s", "dedup_ttl_s", "outcome_retention_s", "judge_cache_ttl_s")


def is_demo(settings: Settings) -> bool:
    """Whether ``settings`` name a demo's keys."""
    return settings.key_prefix.endswith(DEMO_SUFFIX)


def demo_settings(settings: Settings) -> Settings:
    """The demo's settings: its own key prefix, every key expiring within ``DEMO_TTL_S``.

    Idempotent: settings that already name a demo's keys keep their prefix.
    """
    prefix = settings.key_prefix if is_demo(settings) else f"{settings.key_prefix}{DEMO_SUFFIX}"
    update: dict[str, object] = {name: DEMO_TTL_S for name in DEMO_LIFETIMES}
    return settings.model_copy(update={**update, "key_prefix": prefix})


def demo_env(settings: Settings) -> dict[str, str]:
    """What the demo's workers read: its prefix and its lifetimes."""
    env = {f"WINDAGS_{name.upper()}": str(getattr(settings, name)) for name in DEMO_LIFETIMES}
    return {**env, "WINDAGS_KEY_PREFIX": settings.key_prefix}
