"""Judges: the one-method Protocol and its backends.

``AnthropicJudge`` lives in ``workers.judges.anthropic_judge`` and is imported only when
configured, so the built-in path never loads the SDK.
"""

from workers.judges.base import Judge
from workers.judges.builtin import BuiltinJudge
from workers.judges.factory import build_judge
from workers.judges.scripted import ScriptedJudge

__all__ = ["BuiltinJudge", "Judge", "ScriptedJudge", "build_judge"]
