"""The one settings object, read from ``WINDAGS_*`` environment variables at boot.

Time limits must nest, or the broker redelivers tasks that are still running:
judge timeout x attempts < soft limit < hard limit < visibility timeout. ``Settings``
refuses to build when they do not.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Annotated, ClassVar, Self

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    SecretStr,
    ValidationError,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from schemas.judging import ModelPrice
from workers.endpoint import DEFAULT_PRICING as DEFAULT_PRICING
from workers.endpoint import JudgeBackend as JudgeBackend
from workers.endpoint import OptionalPrice, endpoint_price, price_of
from workers.endpoint import ToolUse as ToolUse
from workers.errors import ConfigurationError
from workers.keys import Keys
from workers.package_settings import DEFAULT_PACKAGE_INDEX, checked_index_url, split_names
from workers.redis_urls import check_master, checked_broker_url, checked_url, is_cluster

ENV_PREFIX = "WINDAGS_"
USER_AGENT = "windags-evaluator/0.1 (reference check; +https://pypi.org/project/windags-evaluator/)"
"""What fetches of cited URLs say they are: the project, honestly (no browser's name)."""


STAGE1_JUDGE_CALLS = 1
STAGE2_JUDGE_CALLS = 5


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def _networks(value: object) -> object:
    """``WINDAGS_REFS_ALLOW_NETWORKS``: CIDRs, comma- or space-separated, or a list."""
    if not isinstance(value, str | list | tuple):
        return value
    items = re.split(r"[,\s]+", value) if isinstance(value, str) else list(value)
    networks = []
    for item in items:
        if isinstance(item, str) and not item.strip():
            continue
        try:
            networks.append(ipaddress.ip_network(str(item).strip(), strict=False))
        except ValueError:
            raise ValueError(f"{str(item)[:60]!r} is not a network in CIDR form") from None
    return tuple(networks)


class Settings(BaseSettings):
    """Everything an operator can set. Units are in the names."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="ignore", frozen=True, use_attribute_docstrings=True
    )

    #: Whether construction reads ``WINDAGS_*`` variables: only ``load_settings`` does.
    _reads_environment: ClassVar[bool] = False

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Explicit values, and the environment only when read at boot."""
        return (init_settings, env_settings) if cls._reads_environment else (init_settings,)

    redis_url: Annotated[str, AfterValidator(checked_broker_url)] = "redis://127.0.0.1:6379/0"
    """The broker (and the state, unless the next is set): one Redis, or its Sentinels."""
    state_redis_url: Annotated[str, AfterValidator(checked_url)] | None = None
    """The state's own Redis, Sentinels or Redis Cluster (``cluster://``, workers/redis_urls)."""
    redis_sentinel_master: str | None = Field(default=None, min_length=1)
    """The primary's name its Sentinels know; needed with a ``sentinel://`` URL."""
    key_prefix: str = Field(default="windags", pattern=r"^[^{}]+$")
    """Prefix of every Redis key the fleet writes (no braces: a cluster hash tag)."""
    stream_retention_s: int = Field(default=7 * 24 * 3600, ge=60)
    """Results older than this are trimmed (MINID); longer than any tolerated consumer lag."""
    dedup_ttl_s: int = Field(default=8 * 24 * 3600, ge=60)
    """How long a published review key is remembered; longer than the retention window."""
    max_output_chars: int = Field(default=200_000, ge=1)
    """Outputs longer than this are refused with an ``oversized`` error."""
    max_request_bytes: int = Field(default=1_000_000, ge=1)
    """Raw requests larger than this are refused before parsing."""
    max_task_tries: int = Field(default=3, ge=1)
    """A review whose task dies this many times is dead-lettered."""
    max_task_replays: int = Field(default=20, ge=0)
    """Hand-backs of one message, its Redis connection lost mid-try, that count no try.

    An outage (a Redis restart, a failover) hands back a message a worker held once, so
    this counts the outages one stage of one review lived through, its retries included:
    three restarts under load hand a message back three times at most. Twenty outages
    within one stage of one review are no outages but a try that breaks its own connection
    every time: past them each hand-back counts, and ``max_task_tries`` more dead-letter
    the review (``workers/fleet/replay.py``).
    """
    compress_messages: bool = True
    """Send queue messages zlib-compressed. Every worker reads both kinds; a worker of a
    release before compression quarantines a compressed one: upgrade with this off, and
    turn it on once no such worker runs (docs/how-to/kubernetes.md)."""

    # Bounded waits on every Redis connection: broker, results, ledger, guards, subscribers.
    redis_socket_timeout_s: float = Field(default=5.0, ge=2.0, le=300.0)
    """Longest wait for one Redis reply. Above the 1 s blocking reads (BLMOVE, XREADGROUP
    BLOCK), so that only a Redis that stopped answering trips it."""
    redis_connect_timeout_s: float = Field(default=3.0, gt=0.0, le=60.0)
    """Longest wait to open a connection to Redis."""

    judge_backend: JudgeBackend = JudgeBackend.AUTO
    """``auto``: the Messages API judge when an API key is set, else the built-in one."""
    anthropic_api_key: SecretStr | None = None
    """Also read from ``ANTHROPIC_API_KEY`` by the CLI when unset here."""
    anthropic_base_url: str | None = None
    """Another Messages API server, without ``/v1`` (vLLM, llama.cpp, Ollama, a proxy)."""
    stage1_model: str = "claude-haiku-4-5"
    """The cheap model of the Wall's judged checks, as the endpoint names it."""
    stage2_model: str = "claude-sonnet-4-5"
    """The Ceiling's (and the pairwise check's) model, as the endpoint names it."""
    judge_tool_use: ToolUse = ToolUse.FORCED
    """The endpoint takes a forced tool call, only an offered one, or no tools (``none``)."""
    endpoint_input_price_per_mtok: OptionalPrice = None
    """USD per million input tokens of models ``pricing`` lacks (0 allowed); with the next."""
    endpoint_output_price_per_mtok: OptionalPrice = None
    """USD per million output tokens of models ``pricing`` lacks; with the previous."""
    judge_max_tokens: int = Field(default=1024, ge=16)
    """Most tokens a judge's reply may take."""
    judge_temperature: float | None = Field(default=0.0, ge=0.0, le=1.0)
    """0 for reproducible verdicts; None sends none (some newer models reject it)."""
    judge_timeout_s: float = Field(default=15.0, gt=0)
    """Per model call."""
    judge_max_attempts: int = Field(default=3, ge=1, le=10)
    """Model calls per judging task, first try included (one retry layer: tenacity)."""
    judge_retry_budget_s: float = Field(default=45.0, gt=0)
    """Total time a review may spend retrying model calls."""
    pricing: dict[str, ModelPrice] = Field(default_factory=lambda: dict(DEFAULT_PRICING))
    """USD per million tokens, by model."""
    judge_rate_limit_per_s: float | None = Field(default=None, gt=0)
    """Model calls per second for the whole fleet, per model (a token bucket in Redis)."""
    judge_rate_burst: int = Field(default=10, ge=1)
    """Calls allowed at once after a quiet spell."""
    judge_cache_ttl_s: int = Field(default=24 * 3600, ge=0)
    """How long a model verdict is reused for the same content; 0 turns the cache off."""
    dag_budget_usd: float | None = Field(default=None, gt=0)
    """When set, Stage 2 stops escalating a DAG whose review spend reached it."""

    stage1_soft_limit_s: int = Field(default=60, ge=1)
    """Celery's soft time limit of a Stage 1 task; above its judge call's worst case."""
    stage1_hard_limit_s: int = Field(default=75, ge=2)
    """Stage 1's hard time limit: above the soft one, below the visibility timeout."""
    stage2_soft_limit_s: int = Field(default=300, ge=1)
    """Celery's soft time limit of a Stage 2 task; above five judge calls' worst case."""
    stage2_hard_limit_s: int = Field(default=360, ge=2)
    """Stage 2's hard time limit: above the soft one, below the visibility timeout."""
    visibility_timeout_s: int = Field(default=900, ge=3)
    """Redelivery delay of unacked tasks; above every hard limit."""

    otel_enabled: bool = False
    """Export OpenTelemetry spans and metrics (off: no provider is installed at all)."""
    otel_endpoint: str | None = None
    """OTLP/HTTP endpoint (``http://collector:4318``); console export when unset and enabled."""
    otel_service_name: str = "windags-evaluator"
    """The ``service.name`` resource attribute of every span and metric."""
    prometheus_port: int | None = Field(default=None, ge=0, le=65535)
    """Serve ``/metrics`` for Prometheus on this port (0: any free one); off when unset."""

    # The human gate (workers.human): review queue, review page, attempts, outcomes.
    human_claim_ttl_s: int = Field(default=600, ge=5)
    """A reviewer's claim on an item; uncompleted, it expires back into the queue."""
    attempts_kept: int = Field(default=100, ge=1, le=1000)
    """Attempt records kept per node (newest); they expire with the stream retention."""
    outcomes_kept: int = Field(default=10_000, ge=1)
    """Labelled outcomes kept per skill and per evaluator (newest)."""
    outcome_retention_s: int = Field(default=90 * 24 * 3600, ge=60)
    """Outcomes untouched this long expire (per skill, per evaluator)."""
    # The learned router (workers.learning, issue 15).
    calibration_min_outcomes: int = Field(default=200, ge=0)
    """Outcomes a calibration must have seen before its evidence map replaces the prior."""
    calibration_pseudo_count: float = Field(default=20.0, gt=0.0)
    """Weight, in outcomes, of a skill's claimed success rate in its Beta prior."""
    calibration_refresh_s: float = Field(default=30.0, ge=0.0)
    """How long a router process reuses the calibration model it read before rereading."""
    calibration_refit_s: float = Field(default=300.0, ge=1.0)
    """How often celery beat sends the calibration refit task (run by a Stage 2 worker)."""
    # Packages the outputs name (workers/evaluate/wall/packages, workers/package_index).
    package_index_url: Annotated[str, AfterValidator(checked_index_url)] = DEFAULT_PACKAGE_INDEX
    """A PEP 691 JSON simple index that confirms package names newer than the shipped
    snapshot. Empty: the snapshot is the authority and no name leaves the machine."""
    package_allowlist: Annotated[tuple[str, ...], NoDecode, BeforeValidator(split_names)] = ()
    """Private names never flagged: distributions or import names, or ``fnmatch`` patterns of
    their normal forms (``acme-*``), separated by commas."""
    package_present_ttl_s: int = Field(default=7 * 24 * 3600, ge=0)
    """How long the fleet reuses the index's "it exists" (a project seldom disappears)."""
    package_absent_ttl_s: int = Field(default=3600, ge=0)
    """How long it reuses "no such project" (anyone may register the name next)."""
    package_index_timeout_s: float = Field(default=5.0, gt=0.0, le=60.0)
    """Longest wait for one answer of the index (connect and read)."""
    package_index_budget_s: float = Field(default=10.0, gt=0.0, le=120.0)
    """Longest one review spends asking the index; names left over are unreachable."""
    review_ui_token: SecretStr | None = Field(default=None, min_length=16)
    """Shared token a reviewer signs in to the review page with (and gives a name)."""
    review_ui_auth_header: str | None = Field(default=None, pattern=r"^[A-Za-z0-9-]+$")
    """Header an authenticating proxy sets to the reviewer's identity (X-Forwarded-User).

    Trusted as is: the page must then be reachable only through that proxy."""
    review_ui_secret: SecretStr | None = Field(default=None, min_length=16)
    """Key that signs sessions and CSRF tokens; set it when more than one replica runs.
    Unset: derived from the token, or random per process."""
    review_ui_secure_cookie: bool = False
    """Mark the page's cookies Secure (served over HTTPS)."""

    # References checked against the world (workers.lookups, docs/references.md).
    refs_fetch: bool = False
    """Fetch the URLs outputs cite (``on``/``off``): off, nothing leaves the machine for them."""
    refs_allow_networks: Annotated[tuple[IPNetwork, ...], NoDecode, BeforeValidator(_networks)] = ()
    """CIDRs a fetch may reach although not public (an intranet; the tests' loopback),
    comma-separated. Empty: only public unicast addresses."""
    refs_max_urls: int = Field(default=20, ge=1, le=100)
    """URLs fetched per review; the rest are listed as unverified."""
    refs_budget_s: float = Field(default=30.0, gt=0.0, le=300.0)
    """Time one review's look-ups may take in all; what is left then stays unverified."""
    refs_connect_timeout_s: float = Field(default=5.0, gt=0.0, le=60.0)
    """Longest wait for one connection."""
    refs_fetch_timeout_s: float = Field(default=15.0, gt=0.0, le=120.0)
    """Longest one URL's fetch may take, redirects and a slow body included."""
    refs_max_body_bytes: int = Field(default=2 * 1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    """Body bytes read per page, counted after decompression; a larger page is read in part."""
    refs_max_header_bytes: int = Field(default=64 * 1024, ge=1024, le=1024 * 1024)
    """The most a response's status line and headers may take."""
    refs_max_redirects: int = Field(default=5, ge=0, le=10)
    """Redirects followed, each checked like the first request."""
    refs_host_in_flight: int = Field(default=2, ge=1, le=32)
    """Requests in flight to one host across the whole fleet."""
    refs_host_spacing_s: float = Field(default=0.25, ge=0.0, le=60.0)
    """Least time between two requests to one host across the fleet."""
    refs_retry_after_cap_s: float = Field(default=60.0, ge=0.0, le=3600.0)
    """The longest a ``Retry-After`` keeps the fleet off a host."""
    refs_cache_live_s: int = Field(default=6 * 3600, ge=0)
    """How long a page that answered is reused (0: not cached)."""
    refs_cache_dead_s: int = Field(default=3600, ge=0)
    """How long a confirmed 404, 410 or NXDOMAIN is reused (transient answers never are)."""
    refs_user_agent: str = Field(default=USER_AGENT, min_length=1, max_length=200)
    """The User-Agent fetches name themselves with."""
    refs_soft_limit_s: int = Field(default=60, ge=1)
    """The refs task's soft limit; above ``refs_budget_s`` plus one fetch's timeout."""
    refs_hard_limit_s: int = Field(default=75, ge=2)
    """The refs task's hard limit: above the soft one, below the visibility timeout."""

    @model_validator(mode="after")
    def _sentinels_name_their_master(self) -> Self:
        check_master(self.redis_url, self.redis_sentinel_master)
        check_master(self.state_url, self.redis_sentinel_master)
        return self

    @model_validator(mode="after")
    def _refs_limits_nest(self) -> Self:
        if not self.refs_fetch:  # nothing is fetched: the refs task never waits on the web
            return self
        worst = self.refs_budget_s + self.refs_fetch_timeout_s
        if not worst < self.refs_soft_limit_s < self.refs_hard_limit_s < self.visibility_timeout_s:
            raise ConfigurationError(
                f"refs: need budget + one fetch ({worst:.0f}s) < soft limit "
                f"({self.refs_soft_limit_s}s) < hard limit ({self.refs_hard_limit_s}s) "
                f"< visibility timeout ({self.visibility_timeout_s}s)"
            )
        return self

    @model_validator(mode="after")
    def _endpoint_price_is_whole(self) -> Self:
        endpoint_price(self.endpoint_input_price_per_mtok, self.endpoint_output_price_per_mtok)
        return self

    @model_validator(mode="after")
    def _limits_nest(self) -> Self:
        for stage, soft, hard in (
            ("stage1", self.stage1_soft_limit_s, self.stage1_hard_limit_s),
            ("stage2", self.stage2_soft_limit_s, self.stage2_hard_limit_s),
        ):
            if not soft < hard < self.visibility_timeout_s:
                raise ConfigurationError(
                    f"{stage}: need soft limit ({soft}s) < hard limit ({hard}s) "
                    f"< visibility timeout ({self.visibility_timeout_s}s)"
                )
        # Stage 1 makes one judged call (the Wall); Stage 2 up to five (the Ceiling, then a
        # pairwise check in both orders, rerun once if the orders disagree).
        for stage, calls, soft in (
            ("stage1", STAGE1_JUDGE_CALLS, self.stage1_soft_limit_s),
            ("stage2", STAGE2_JUDGE_CALLS, self.stage2_soft_limit_s),
        ):
            worst_s = calls * self.worst_judge_call_s
            if worst_s >= soft:
                raise ConfigurationError(
                    f"{stage}: {calls} judge call(s) may take {worst_s:.0f}s, not below its soft "
                    f"limit ({soft}s): lower judge_timeout_s or judge_max_attempts"
                )
        return self

    @classmethod
    def from_environment(cls, env: Mapping[str, str], *, redis_url: str) -> Settings:
        """What a worker started with ``env`` reads (its ``WINDAGS_*`` keys), at ``redis_url``.

        For the processes that start workers: they hold the environment they pass on, and
        must agree with the workers on every setting.
        """
        values = {
            key.removeprefix(ENV_PREFIX).lower(): value
            for key, value in env.items()
            if key.startswith(ENV_PREFIX)
        }
        return cls.model_validate({**values, "redis_url": redis_url})

    @property
    def worst_judge_call_s(self) -> float:
        """The longest one judged call can take, retries included."""
        return min(
            self.judge_timeout_s * self.judge_max_attempts,
            self.judge_retry_budget_s + self.judge_timeout_s,
        )

    def price_of(self, model: str) -> ModelPrice:
        """``model``'s price: ``pricing``'s, else the endpoint's; neither is a config error."""
        given = (self.endpoint_input_price_per_mtok, self.endpoint_output_price_per_mtok)
        return price_of(model, self.pricing, endpoint_price(*given))

    @property
    def state_url(self) -> str:
        """Where the state lives (``state_redis_url``, else the broker's Redis)."""
        return self.state_redis_url or self.redis_url

    @property
    def state_on_broker(self) -> bool:
        """Whether the state shares the broker's Redis: one script may touch both."""
        return self.state_redis_url in (None, self.redis_url)

    @property
    def keys(self) -> Keys:
        """Every Redis key of this deployment; hash-tagged when the state is a cluster."""
        return Keys(self.key_prefix, tagged=is_cluster(self.state_url))


class _FromEnvironment(Settings):
    """``Settings`` that read ``WINDAGS_*`` variables (pydantic-settings parses them)."""

    _reads_environment = True


def load_settings() -> Settings:
    """Settings from the environment, read once at boot (never at import).

    Raises:
        ConfigurationError: one line naming the first bad variable and what is wrong.
    """
    try:
        read = _FromEnvironment()
        return Settings(**{name: getattr(read, name) for name in Settings.model_fields})
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"])
        name = f"{ENV_PREFIX}{field.split('.')[0].upper()}" if field else "settings"
        message, ctx = first["msg"], first.get("ctx") or {}
        if first["type"] == "too_short":  # pydantic says "16 items" of a secret
            message = f"must be at least {ctx['min_length']} characters, not {ctx['actual_length']}"
        raise ConfigurationError(f"{name}: {message}") from None
