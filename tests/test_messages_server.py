"""The fake Messages API speaks well enough for the real SDK, and records what it got."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anthropic
import httpx2
import pytest

from bench.common import messages_api_process
from workers.testing.messages_api.server import Reply, ServerHandle, running_server

TOOL: Any = {
    "name": "record_scores",
    "input_schema": {"type": "object", "properties": {"clarity": {}, "relevance": {}}},
}


#: Longer than pytest's per-test timeout (pyproject.toml): waiting it out fails the test.
HANG_PAST_THE_TEST_S = 600.0


@pytest.fixture
def server() -> Iterator[ServerHandle]:
    with running_server() as handle:
        yield handle


@pytest.fixture
def client(server: ServerHandle) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        api_key=server.api_key, base_url=server.base_url, max_retries=0, timeout=5
    ) as sdk:
        yield sdk


def ask(client: anthropic.Anthropic, text: str = "judge this") -> anthropic.types.Message:
    return client.messages.create(
        model="claude-haiku-4-5",
        max_tokens=64,
        tools=[TOOL],
        tool_choice={"type": "tool", "name": "record_scores"},
        messages=[{"role": "user", "content": text}],
    )


def test_default_reply_is_a_tool_call_the_sdk_parses(
    client: anthropic.Anthropic, server: ServerHandle
) -> None:
    message = ask(client)
    assert message.type == "message" and message.role == "assistant"
    assert message.model == "claude-haiku-4-5"
    assert message.stop_reason == "tool_use"
    block = message.content[0]
    assert block.type == "tool_use" and block.name == "record_scores"
    assert set(block.input) == {"clarity", "relevance"}
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    assert message.usage.cache_read_input_tokens == 0
    assert server.requests[0].usage == message.usage.model_dump(
        include={
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        }
    )


def test_default_scores_are_deterministic_per_request(client: anthropic.Anthropic) -> None:
    first, again, other = ask(client, "a"), ask(client, "a"), ask(client, "b")
    inputs = [
        block.input for m in (first, again, other) if (block := m.content[0]).type == "tool_use"
    ]
    assert len(inputs) == 3
    assert inputs[0] == inputs[1]
    assert inputs[0] != inputs[2]


def test_scripted_replies_are_served_in_order_then_default(
    client: anthropic.Anthropic, server: ServerHandle
) -> None:
    server.script(Reply.ok({"clarity": 0.25, "relevance": 0.5}), Reply.no_tool())
    scored = ask(client).content[0]
    assert scored.type == "tool_use"
    assert scored.input == {
        "clarity": {"score": 0.25, "justification": "scripted evidence"},
        "relevance": {"score": 0.5, "justification": "scripted evidence"},
    }
    text = ask(client)
    assert text.stop_reason == "end_turn" and text.content[0].type == "text"
    assert ask(client).content[0].type == "tool_use"
    assert server.calls == 3


@pytest.mark.parametrize(
    ("reply", "error", "kind"),
    [
        (Reply.rate_limited(7), anthropic.RateLimitError, "rate_limit_error"),
        (Reply.overloaded(), anthropic.OverloadedError, "overloaded_error"),
        (Reply.server_error(), anthropic.InternalServerError, "api_error"),
        (Reply.bad_request(), anthropic.BadRequestError, "invalid_request_error"),
    ],
)
def test_errors_are_anthropic_shaped(
    client: anthropic.Anthropic,
    server: ServerHandle,
    reply: Reply,
    error: type[anthropic.APIStatusError],
    kind: str,
) -> None:
    server.script(reply)
    with pytest.raises(error) as caught:
        ask(client)
    assert caught.value.status_code == reply.status
    assert caught.value.type == kind
    assert caught.value.body == {
        "type": "error",
        "error": {"type": kind, "message": f"scripted {kind}"},
    }
    assert caught.value.request_id is not None
    if reply.status == 429:
        assert caught.value.response.headers["retry-after"] == "7"
    assert server.requests[0].status == reply.status


def test_error_code_travels_in_details(client: anthropic.Anthropic, server: ServerHandle) -> None:
    server.script(Reply.error(429, "rate_limit_error", error_code="enforced_spend_limit_reached"))
    with pytest.raises(anthropic.RateLimitError) as caught:
        ask(client)
    assert caught.value.error_code == "enforced_spend_limit_reached"


def test_wrong_key_is_401_and_recorded(server: ServerHandle) -> None:
    with anthropic.Anthropic(api_key="wrong", base_url=server.base_url, max_retries=0) as bad:
        with pytest.raises(anthropic.AuthenticationError) as caught:
            ask(bad)
    assert caught.value.type == "authentication_error"
    assert [r.status for r in server.requests] == [401]


def test_missing_version_header_and_bad_body_are_400(server: ServerHandle) -> None:
    url = f"{server.base_url}/v1/messages"
    with httpx2.Client() as http:
        no_version = http.post(url, headers={"x-api-key": server.api_key}, json={"model": "m"})
        garbage = http.post(
            url,
            content=b"{not json",
            headers={"x-api-key": server.api_key, "anthropic-version": "1"},
        )
    assert no_version.status_code == 400
    assert no_version.json()["error"]["type"] == "invalid_request_error"
    assert "anthropic-version" in no_version.json()["error"]["message"]
    assert garbage.status_code == 400 and garbage.json()["type"] == "error"
    assert server.requests[1].body is None


def test_records_headers_and_body(client: anthropic.Anthropic, server: ServerHandle) -> None:
    ask(client, "remember me")
    seen = server.requests[0]
    assert seen.path == "/v1/messages"
    assert seen.headers["anthropic-version"]
    assert seen.body is not None
    assert seen.body["messages"] == [{"role": "user", "content": "remember me"}]


def test_hang_outlasts_the_client_timeout(server: ServerHandle) -> None:
    # A hang longer than the test's own timeout: the client's timeout is the only way out.
    server.script(Reply.hang(HANG_PAST_THE_TEST_S))
    with anthropic.Anthropic(
        api_key=server.api_key, base_url=server.base_url, max_retries=0, timeout=0.3
    ) as sdk:
        started = time.monotonic()
        with pytest.raises(anthropic.APITimeoutError):
            ask(sdk)
    assert time.monotonic() - started >= 0.3  # it waited for its timeout
    assert server.requests[0].status == 0  # and the server never answered


def test_many_concurrent_connections_are_served_in_parallel() -> None:
    with (
        running_server(latency_s=0.2) as server,
        anthropic.Anthropic(
            api_key=server.api_key, base_url=server.base_url, max_retries=0, timeout=5
        ) as sdk,
        ThreadPoolExecutor(48) as pool,
    ):
        replies = list(pool.map(lambda i: ask(sdk, str(i)), range(48)))
    assert len(replies) == 48 and server.calls == 48
    # Served side by side, counted by the server (a wall-clock bound failed under load).
    assert server.max_in_flight >= 8, f"at most {server.max_in_flight} of 48 in flight"


def test_cache_control_system_is_written_once_then_read(
    client: anthropic.Anthropic, server: ServerHandle
) -> None:
    def call() -> anthropic.types.Usage:
        return client.messages.create(
            model="m",
            max_tokens=16,
            messages=[{"role": "user", "content": "x"}],
            system=[
                {"type": "text", "text": "rubric " * 50, "cache_control": {"type": "ephemeral"}}
            ],
        ).usage

    first, second = call(), call()
    assert first.cache_creation_input_tokens and not first.cache_read_input_tokens
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert not second.cache_creation_input_tokens


def test_cli_entry_point_serves_until_stopped_whatever_signals_it_inherited() -> None:
    with messages_api_process(latency_s=0.05) as (proc, base_url):
        assert base_url.startswith("http://127.0.0.1:")
        with anthropic.Anthropic(api_key="test-key", base_url=base_url, max_retries=0) as sdk:
            started = time.monotonic()
            assert ask(sdk).stop_reason == "tool_use"
            assert time.monotonic() - started >= 0.05
    assert proc.returncode == 0  # stopped by SIGTERM, cleanly (a SIGINT too: next test)


def test_the_server_stops_on_sigint_even_when_started_with_it_ignored() -> None:
    ignored = "import signal, sys, runpy; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    ignored += "sys.argv[1:] = ['--port', '0']; "
    ignored += "runpy.run_module('workers.testing.messages_api.server', run_name='__main__')"
    proc = subprocess.Popen([sys.executable, "-c", ignored], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("listening on ")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        assert proc.stdout is not None
        proc.stdout.close()
