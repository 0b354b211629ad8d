"""One rooted error tree: callers branch on type, never on message text.

Retryable and terminal faults are distinct types so that each retry layer can tell them
apart without parsing strings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from schemas.result import ReviewError


class EvaluatorError(Exception):
    """Root of every error this package raises on purpose."""


class InvalidRequest(EvaluatorError):
    """A review request that does not match the wire contract.

    Attributes:
        field: dotted path of the first offending field (``"skill.success_rate"``).
        reason: what is wrong with it, one line.
        others: every other offending field with its reason, in the order found (an
            unknown field beside a missing one is named too).
    """

    def __init__(self, field: str, reason: str, others: tuple[tuple[str, str], ...] = ()) -> None:
        text = f"{field}: {reason}" if field else reason
        if others:
            text += "; also " + "; ".join(f"{where}: {why}" for where, why in others)
        super().__init__(text)
        self.field = field
        self.reason = reason
        self.others = others


class ConfigurationError(EvaluatorError):
    """Settings or policy that cannot work; raised at boot, never per message."""


class JudgeError(EvaluatorError):
    """A judge could not produce a verdict. The layer it judged is indeterminate."""


class JudgeRetryableError(JudgeError):
    """A transient judge fault (rate limit, overload, 5xx, timeout, connection)."""


class JudgeTerminalError(JudgeError):
    """A judge fault that another try will not fix (bad request, auth, permission)."""


class JudgeOutputError(JudgeError):
    """The judge answered, but not with a verdict that validates.

    Attributes:
        input_tokens: input tokens the unusable replies consumed (0 when not known).
        output_tokens: output tokens they consumed.
        calls: model calls made for them.
        cost_usd: what they cost at the endpoint's price: paid for, so charged.
        cache_read_input_tokens: input tokens read from the prompt cache.
        cache_creation_input_tokens: input tokens written to it.
    """

    def __init__(
        self,
        message: str,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        calls: int = 0,
        cost_usd: float = 0.0,
        cache_read_input_tokens: int = 0,
        cache_creation_input_tokens: int = 0,
    ) -> None:
        super().__init__(message)
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.calls = calls
        self.cost_usd = cost_usd
        self.cache_read_input_tokens = cache_read_input_tokens
        self.cache_creation_input_tokens = cache_creation_input_tokens


class BudgetExceededError(EvaluatorError):
    """A DAG's review budget is spent; further Stage 2 calls are refused."""


class FleetError(EvaluatorError):
    """Base for faults of the queue and stream machinery."""


class BrokerUnavailableError(FleetError):
    """Redis did not answer within the client's bounded budget."""


class PublishError(FleetError):
    """A result could not be written to its stream."""


class ReviewTimeoutError(FleetError, TimeoutError):
    """No verdict came back by the caller's deadline; the review is still in flight.

    Awaiting the same review again is allowed: a verdict published meanwhile answers at
    once. A ``TimeoutError`` too, so ``except TimeoutError`` and runtimes that treat
    timeouts apart (LangGraph's default retry policy skips them) see it as one.

    Attributes:
        review_keys: the reviews not back (``dag_id:node_id:attempt``).
        timeout_s: the deadline that passed.
    """

    def __init__(self, review_keys: tuple[str, ...], timeout_s: float) -> None:
        super().__init__(f"no verdict on {', '.join(review_keys)} within {timeout_s:g} s")
        self.review_keys = review_keys
        self.timeout_s = timeout_s


class ReviewFailedError(FleetError):
    """The fleet could not review the request: its ``ReviewError`` entry, raised.

    Attributes:
        error: the ``schemas.result.ReviewError`` the fleet published (code, field, message).
    """

    def __init__(self, error: ReviewError) -> None:
        where = f" ({error.field})" if error.field else ""
        super().__init__(f"{error.code.value}{where}: {error.message}")
        self.error = error


class ClientClosedError(FleetError):
    """The client was closed while a caller still waited on it."""
