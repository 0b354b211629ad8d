"""A judge that answers from a script: the test double shipped beside the real judges."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable

from schemas.judging import JudgeTask, JudgeVerdict
from workers.errors import JudgeError


class ScriptExhaustedError(AssertionError):
    """The code under test asked the judge more often than the test scripted."""


class ScriptedJudge:
    """Returns queued verdicts or raises queued judge errors, in order; records every task.

    Args:
        script: verdicts to return and ``JudgeError`` instances to raise, in order.
        default: answer once the script is empty; without it an empty script fails loudly.
    """

    def __init__(
        self, script: Iterable[JudgeVerdict | JudgeError] = (), default: JudgeVerdict | None = None
    ) -> None:
        self._script: deque[JudgeVerdict | JudgeError] = deque(script)
        self._default = default
        self._lock = threading.Lock()
        self.tasks: list[JudgeTask] = []
        """Every task evaluated, oldest first."""

    def push(self, *items: JudgeVerdict | JudgeError) -> None:
        """Queue more answers."""
        with self._lock:
            self._script.extend(items)

    @property
    def remaining(self) -> int:
        """Answers still queued."""
        with self._lock:
            return len(self._script)

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        """The next scripted answer for ``task``."""
        with self._lock:
            self.tasks.append(task)
            item = self._script.popleft() if self._script else self._default
        if item is None:
            raise ScriptExhaustedError(f"ScriptedJudge: no answer scripted for task {task.tier}")
        if isinstance(item, JudgeError):
            raise item
        return item
