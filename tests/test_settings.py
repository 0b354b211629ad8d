"""Settings that cannot work stop the process at boot, with the reason."""

from __future__ import annotations

import pytest

from workers.errors import ConfigurationError
from workers.settings import STAGE2_JUDGE_CALLS, Settings, load_settings


def test_the_defaults_nest() -> None:
    settings = Settings()
    assert settings.stage2_hard_limit_s < settings.visibility_timeout_s
    assert STAGE2_JUDGE_CALLS * settings.worst_judge_call_s < settings.stage2_soft_limit_s
    assert settings.worst_judge_call_s < settings.stage1_soft_limit_s


def test_a_hard_limit_above_the_visibility_timeout_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="stage2: need soft limit"):
        Settings(stage2_hard_limit_s=1000, visibility_timeout_s=900)


def test_stage1_judge_calls_must_fit_inside_its_soft_limit() -> None:
    with pytest.raises(ConfigurationError, match=r"stage1: 1 judge call\(s\) may take 90s"):
        Settings(judge_timeout_s=30, judge_max_attempts=3, judge_retry_budget_s=90)


def test_stage2_budgets_for_the_ceiling_and_both_pairwise_orders() -> None:
    with pytest.raises(ConfigurationError, match=r"stage2: 5 judge call\(s\)"):
        Settings(
            judge_timeout_s=20,
            judge_max_attempts=3,
            stage1_soft_limit_s=100,
            stage1_hard_limit_s=120,
        )


def test_settings_come_from_windags_environment_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WINDAGS_KEY_PREFIX", "ops")
    monkeypatch.setenv("WINDAGS_DAG_BUDGET_USD", "2.5")
    settings = load_settings()
    assert type(settings) is Settings
    assert (settings.key_prefix, settings.dag_budget_usd) == ("ops", 2.5)
    assert settings.keys.results("d1") == "ops:results:d1"


def test_an_unpriced_model_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="no price for model 'mystery'"):
        Settings().price_of("mystery")


def test_a_workers_environment_gives_the_settings_it_will_read() -> None:
    env = {"WINDAGS_KEY_PREFIX": "fleet-a", "WINDAGS_MAX_TASK_TRIES": "5", "PATH": "/usr/bin"}
    settings = Settings.from_environment(env, redis_url="redis://127.0.0.1:6390/0")
    assert (settings.key_prefix, settings.max_task_tries) == ("fleet-a", 5)
    assert settings.redis_url == "redis://127.0.0.1:6390/0"


def test_explicit_settings_never_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WINDAGS_MAX_REQUEST_BYTES", "abc")
    monkeypatch.setenv("WINDAGS_KEY_PREFIX", "from-env")
    assert Settings(redis_url="redis://127.0.0.1:1/0").key_prefix == "windags"
    with pytest.raises(ConfigurationError, match=r"^WINDAGS_MAX_REQUEST_BYTES: "):
        load_settings()
