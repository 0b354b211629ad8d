"""docs/reference/telemetry.md: the fleet's span names, span attributes and metrics.

Metrics are read by building ``workers.observe.metrics.Instruments`` on a meter that writes
down what is created (name, kind, unit, description). Spans and their attributes are read
from the source: every call of a function named ``span`` gives a span name, and every
``windags.*``/``gen_ai.*`` key an attribute dict, ``set_attribute`` or ``set_attributes``
names. A span, attribute or instrument added to the code is on the page after the next run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from opentelemetry import metrics
from opentelemetry.metrics import CallbackT, Counter, Histogram, ObservableGauge

from docgen.markdown import NOTICE, code, table
from schemas.judging import JudgeTier
from workers.fleet.queues import Queue
from workers.observe.metrics import Instruments

PAGE = "reference/telemetry.md"
WORKERS = Path(__file__).resolve().parents[1] / "workers"
#: Attribute namespaces the fleet writes (its own, and OpenTelemetry's conventions it uses).
NAMESPACES = ("windags.", "gen_ai.", "error.", "url.", "http.", "server.")
#: What fills a placeholder of a span name: the values of the enum the code passes there.
PLACEHOLDERS: dict[str, type[Enum]] = {"stage": Queue, "tier": JudgeTier}


@dataclass(frozen=True)
class Instrument:
    """One metric instrument as the code creates it."""

    name: str
    kind: str
    unit: str
    description: str


class RecordingMeter(metrics.NoOpMeter):
    """A no-op meter that writes down every instrument created on it."""

    def __init__(self) -> None:
        super().__init__("docgen")
        self.created: list[Instrument] = []

    def _note(self, kind: str, name: str, unit: str, description: str) -> None:
        self.created.append(Instrument(name, kind, unit, description))

    def create_counter(self, name: str, unit: str = "", description: str = "") -> Counter:
        """Note a counter."""
        self._note("counter", name, unit, description)
        return super().create_counter(name, unit, description)

    def create_histogram(
        self, name: str, unit: str = "", description: str = "", **options: Any
    ) -> Histogram:
        """Note a histogram."""
        self._note("histogram", name, unit, description)
        return super().create_histogram(name, unit, description, **options)

    def create_observable_gauge(
        self,
        name: str,
        callbacks: Sequence[CallbackT] | None = None,
        unit: str = "",
        description: str = "",
    ) -> ObservableGauge:
        """Note a gauge read when metrics are collected."""
        self._note("gauge", name, unit, description)
        return super().create_observable_gauge(name, callbacks, unit, description)


def instruments() -> list[Instrument]:
    """Every instrument ``Instruments`` creates, in its order."""
    meter = RecordingMeter()
    Instruments(meter)
    return meter.created


def _text(node: ast.expr) -> str | None:
    """A string literal, or an f-string with each ``{expr}`` shown as ``<expr>``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append(f"<{ast.unparse(value.value)}>")
        return "".join(parts)
    return None


def _called(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _sources() -> Iterator[tuple[str, ast.AST]]:
    for path in sorted(WORKERS.rglob("*.py")):
        yield str(path.relative_to(WORKERS.parent)), ast.parse(path.read_text(encoding="utf-8"))


def spans() -> dict[str, list[str]]:
    """Each span name the code opens, and the modules that open it."""
    found: dict[str, list[str]] = {}
    for where, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called(node) == "span" and node.args:
                name = _text(node.args[0])
                if name is not None and name.startswith("windags"):
                    found.setdefault(name, []).append(where)
    return found


def _attribute_keys(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, ast.Dict):
        yield from (key for key in node.keys if key is not None)
    elif isinstance(node, ast.Call) and _called(node) == "set_attribute" and node.args:
        yield node.args[0]
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
        yield node.slice


def attributes() -> dict[str, list[str]]:
    """Each span attribute the code sets, and the modules that set it."""
    found: dict[str, list[str]] = {}
    for where, tree in _sources():
        for node in ast.walk(tree):
            for key in _attribute_keys(node):
                name = _text(key)
                if name is not None and name.startswith(NAMESPACES) and " " not in name:
                    if where not in found.setdefault(name, []):
                        found[name].append(where)
    return dict(sorted(found.items()))


def _values(name: str) -> str:
    said = [
        f"`<{placeholder}>`: " + ", ".join(code(str(m.value)) for m in PLACEHOLDERS[placeholder])
        for placeholder in PLACEHOLDERS
        if f"<{placeholder}>" in name
    ]
    return "; ".join(said)


def render() -> str:
    """The whole page."""
    span_rows = [(code(n), _values(n), ", ".join(code(w) for w in ws)) for n, ws in spans().items()]
    metric_rows = [(code(i.name), i.kind, code(i.unit), i.description) for i in instruments()]
    attribute_rows = [(code(n), ", ".join(code(w) for w in ws)) for n, ws in attributes().items()]
    lines = [
        NOTICE,
        "# Spans and metrics",
        "",
        "What a fleet with `WINDAGS_OTEL_ENABLED=true` (or `WINDAGS_PROMETHEUS_PORT`) records.",
        "Celery's instrumentation adds its own `apply_async/<task>` and `run/<task>` spans",
        "around each hop; the spans below are the fleet's. How to export them:",
        "[Trace a review and export metrics](../how-to/observe.md).",
        "",
        "## Spans",
        "",
        *table(("span", "placeholders", "opened in"), span_rows),
        "",
        "## Metrics",
        "",
        "Prometheus names follow OpenTelemetry's translation: dots become underscores, a",
        "counter ends in `_total` and a unit is appended (`windags_stage_duration_seconds`).",
        "",
        *table(("metric", "kind", "unit", "what it counts"), metric_rows),
        "",
        "## Span attributes",
        "",
        *table(("attribute", "set in"), attribute_rows),
        "",
    ]
    return "\n".join(lines)
