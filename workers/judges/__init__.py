"""Judges: the one-method Protocol, its backends, and the wrappers composed around them.

``AnthropicJudge`` lives in ``workers.judges.anthropic_judge`` and is imported only when
configured, so the built-in path never loads the SDK. Test doubles live in
``workers.testing``.
"""

from workers.judges.base import Judge
from workers.judges.builtin import BuiltinJudge
from workers.judges.factory import build_judge

__all__ = ["BuiltinJudge", "Judge", "build_judge"]
