"""Each fault ends as designed, with the number of HTTP calls the server saw."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from pydantic import SecretStr

from schemas.judging import JudgeTask, JudgeTier
from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputKind
from workers.errors import ConfigurationError, JudgeRetryableError, JudgeTerminalError
from workers.judges.anthropic_judge import AnthropicJudge
from workers.judges.retry import RetryPolicy, is_retryable, to_judge_error
from workers.settings import Settings
from workers.testing.messages_api.server import Reply, ServerHandle, running_server

TIMEOUT_S = 0.4
#: Longer than pytest's per-test timeout (pyproject.toml): waiting it out fails the test.
HANG_PAST_THE_TEST_S = 600.0


def policy(**overrides: Any) -> RetryPolicy:
    values: dict[str, Any] = {
        "max_attempts": 3,
        "budget_s": 10.0,
        "base_delay_s": 0.01,
        "max_delay_s": 0.02,
        "max_retry_after_s": 2.0,
    }
    values.update(overrides)
    return RetryPolicy(**values)


TASK = JudgeTask(
    tier=JudgeTier.WALL,
    dimensions=(Dimension.SUBSTANCE,),
    output=NodeOutput(kind=OutputKind.TEXT, content="some output"),
)


@pytest.fixture
def server() -> Iterator[ServerHandle]:
    with running_server() as handle:
        yield handle


def make_judge(
    server: ServerHandle, retry: RetryPolicy | None = None, api_key: str | None = None
) -> AnthropicJudge:
    settings = Settings(
        anthropic_api_key=SecretStr(api_key or server.api_key),
        anthropic_base_url=server.base_url,
        judge_timeout_s=TIMEOUT_S,
    )
    return AnthropicJudge(settings, retry or policy())


def gaps(server: ServerHandle) -> list[float]:
    times = [r.received_at for r in server.requests]
    return [b - a for a, b in itertools.pairwise(times)]


def test_429_honours_retry_after_then_succeeds(server: ServerHandle) -> None:
    server.script(Reply.rate_limited(retry_after_s=1))
    with make_judge(server) as judge:
        verdict = judge.evaluate(TASK)
    assert server.calls == 2 and verdict.calls == 2
    assert [r.status for r in server.requests] == [429, 200]
    assert gaps(server)[0] >= 0.95


def test_retry_after_is_capped_by_the_policy(server: ServerHandle) -> None:
    # Asked to wait longer than the test may run: the retry arrives only if capped.
    server.script(Reply.rate_limited(retry_after_s=int(HANG_PAST_THE_TEST_S)))
    with make_judge(server, policy(max_retry_after_s=0.2)) as judge:
        assert judge.evaluate(TASK).calls == 2
    assert gaps(server)[0] >= 0.2  # waited the cap


def test_529_until_attempts_run_out_is_retryable(server: ServerHandle) -> None:
    server.script(*[Reply.overloaded()] * 5)
    with make_judge(server) as judge, pytest.raises(JudgeRetryableError) as caught:
        judge.evaluate(TASK)
    assert server.calls == 3  # judge_max_attempts, and not one more
    assert "3 attempt(s)" in str(caught.value) and "529 overloaded_error" in str(caught.value)


def test_attempts_default_to_settings(server: ServerHandle) -> None:
    server.script(*[Reply.overloaded()] * 5)
    settings = Settings(
        anthropic_api_key=SecretStr(server.api_key),
        judge_max_attempts=2,
        anthropic_base_url=server.base_url,
        judge_retry_budget_s=5,
    )
    assert RetryPolicy.from_settings(settings).max_attempts == 2
    with AnthropicJudge(settings) as judge, pytest.raises(JudgeRetryableError):
        judge.evaluate(TASK)
    assert server.calls == 2


def test_one_attempt_means_one_call_so_the_sdk_does_not_retry(server: ServerHandle) -> None:
    server.script(Reply.overloaded(), Reply.server_error())
    with make_judge(server, policy(max_attempts=1)) as judge:
        with pytest.raises(JudgeRetryableError):
            judge.evaluate(TASK)
    assert server.calls == 1


def test_500_then_ok(server: ServerHandle) -> None:
    server.script(Reply.server_error())
    with make_judge(server) as judge:
        assert judge.evaluate(TASK).calls == 2
    assert [r.status for r in server.requests] == [500, 200]


def test_hung_call_times_out_and_is_retried(server: ServerHandle) -> None:
    # The hang outlasts the test: only the judge's own timeout gets it to the retry.
    server.script(Reply.hang(HANG_PAST_THE_TEST_S))
    with make_judge(server) as judge:
        verdict = judge.evaluate(TASK)
    assert server.calls == 2 and verdict.calls == 2
    assert [r.status for r in server.requests] == [0, 200]
    assert gaps(server)[0] >= TIMEOUT_S  # the retry came after the timeout


def test_always_hung_ends_retryable_with_timeout(server: ServerHandle) -> None:
    server.script(*[Reply.hang(30)] * 3)
    with make_judge(server) as judge, pytest.raises(JudgeRetryableError, match="timeout"):
        judge.evaluate(TASK)
    assert server.calls == 3


def test_budget_stops_retries_before_attempts_run_out(server: ServerHandle) -> None:
    # Fifty attempts with jittered waits of up to 0.2 s (0.1 s on average) need about 5 s:
    # the 0.5 s budget stops far earlier. The count shows it, not a wall-clock bound.
    server.script(*[Reply.overloaded()] * 50)
    slow = policy(max_attempts=50, budget_s=0.5, base_delay_s=0.2, max_delay_s=0.2)
    with make_judge(server, slow) as judge, pytest.raises(JudgeRetryableError):
        judge.evaluate(TASK)
    assert 1 < server.calls < 50


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (Reply.bad_request(), 400),
        (Reply.error(403, "permission_error"), 403),
        (Reply.error(404, "not_found_error"), 404),
    ],
)
def test_client_errors_fail_fast_as_terminal(
    server: ServerHandle, reply: Reply, status: int
) -> None:
    server.script(reply, Reply.ok())
    with make_judge(server) as judge, pytest.raises(JudgeTerminalError) as caught:
        judge.evaluate(TASK)
    assert server.calls == 1
    assert f"HTTP {status} {reply.error_type}" in str(caught.value)


def test_wrong_key_is_terminal_after_one_call(server: ServerHandle) -> None:
    with make_judge(server, api_key="wrong") as judge:
        with pytest.raises(JudgeTerminalError, match="HTTP 401 authentication_error"):
            judge.evaluate(TASK)
    assert [r.status for r in server.requests] == [401]


def test_spend_limit_429_is_not_retried(server: ServerHandle) -> None:
    server.script(
        Reply.error(
            429, "rate_limit_error", {"retry-after": "0"}, error_code="enforced_spend_limit_reached"
        )
    )
    with make_judge(server) as judge, pytest.raises(JudgeTerminalError, match="429"):
        judge.evaluate(TASK)
    assert server.calls == 1


def test_x_should_retry_false_is_respected(server: ServerHandle) -> None:
    server.script(Reply.error(500, "api_error", {"x-should-retry": "false"}))
    with make_judge(server) as judge, pytest.raises(JudgeTerminalError, match="500"):
        judge.evaluate(TASK)
    assert server.calls == 1


def test_connection_refused_is_retryable() -> None:
    with running_server() as gone:
        base_url = gone.base_url
    settings = Settings(
        anthropic_api_key=SecretStr("k"), anthropic_base_url=base_url, judge_timeout_s=TIMEOUT_S
    )
    with AnthropicJudge(settings, policy(max_attempts=2)) as judge:
        with pytest.raises(JudgeRetryableError, match=r"2 attempt.*connection error"):
            judge.evaluate(TASK)


@pytest.mark.parametrize(
    "bad",
    [
        {"max_attempts": 0},
        {"base_delay_s": 1.0, "max_delay_s": 0.5},
        {"budget_s": 0},
        {"max_retry_after_s": -1},
    ],
)
def test_impossible_policies_fail_at_declaration(bad: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        policy(**bad)


def test_backoff_is_jittered_and_capped() -> None:
    p = policy(base_delay_s=0.1, max_delay_s=0.3)
    delays = [p.backoff_s(attempt) for attempt in (1, 2, 3, 8) for _ in range(50)]
    assert all(0 <= d <= 0.3 for d in delays)
    assert len(set(delays)) > 100


#: 200 replies that are not a message: the SDK raises some raw (not as its own errors)
#: and returns the others as a str, None, a list or a half-built Message.
GARBLED = {
    "not_json": Reply.raw(b'{"type": "message", "content": [ this is not JSON'),
    "empty_body": Reply.raw(b""),
    "bad_utf8": Reply.raw(b'\xff\xfe{"a":1}'),
    "html_page": Reply.raw(b"<html>502 Bad Gateway</html>", content_type="text/html"),
    "json_null": Reply.raw(b"null"),
    "json_list": Reply.raw(b"[1, 2]"),
    "empty_object": Reply.raw(b"{}"),
    "content_not_a_list": Reply.raw(
        b'{"type": "message", "content": "x", "usage": {"input_tokens": 1, "output_tokens": 1}}'
    ),
}


@pytest.mark.parametrize("name", sorted(GARBLED))
def test_a_garbled_200_is_retried_to_the_policy_bound_then_retryable(
    server: ServerHandle, name: str
) -> None:
    server.script(*[GARBLED[name]] * 5)
    with make_judge(server) as judge, pytest.raises(JudgeRetryableError) as caught:
        judge.evaluate(TASK)
    assert server.calls == 3  # max_attempts, not one more, and no corrective turn
    assert [r.status for r in server.requests] == [200, 200, 200]
    assert "3 attempt(s)" in str(caught.value) and "garbled response" in str(caught.value)


def test_a_garbled_200_then_a_good_reply_succeeds(server: ServerHandle) -> None:
    server.script(GARBLED["not_json"])
    with make_judge(server) as judge:
        verdict = judge.evaluate(TASK)
    assert server.calls == 2 and verdict.calls == 2


def test_a_reply_that_fails_sdk_validation_is_retryable() -> None:
    request = httpx2.Request("POST", "http://judge.invalid/v1/messages")
    exc = anthropic.APIResponseValidationError(httpx2.Response(200, request=request), body={})
    assert is_retryable(exc)
    assert isinstance(to_judge_error(exc, 3, 0.1), JudgeRetryableError)
