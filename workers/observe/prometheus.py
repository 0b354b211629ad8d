"""A Prometheus ``/metrics`` endpoint for one worker process, fed by the OTel meter.

For ops who scrape rather than push. Each endpoint has its own registry, so two in one
process (tests) never see each other's metrics. A port already taken (a second worker
on the same host with the same setting, or pool children of a prefork worker) is logged
and skipped, never fatal: the worker's job is reviewing, not serving metrics.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from opentelemetry.exporter.prometheus import PrometheusMetricReader

log = logging.getLogger("windags.telemetry")


class MetricsEndpoint:
    """The metric reader to give the MeterProvider, and the HTTP server that serves it."""

    def __init__(self, port: int, *, host: str = "0.0.0.0") -> None:
        """Serve on ``host:port``; every interface by default, since scrapers are remote."""
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from prometheus_client import CollectorRegistry, start_http_server

        registry = CollectorRegistry()
        self.reader: PrometheusMetricReader = PrometheusMetricReader(registry=registry)
        self._server: WSGIServer | None = None
        try:
            self._server, _ = start_http_server(port, addr=host, registry=registry)
        except OSError as exc:
            log.warning("Prometheus endpoint not served on port %d: %s", port, exc)
            return
        log.info("Prometheus metrics on http://%s:%d/metrics", host, self.port)

    @property
    def port(self) -> int | None:
        """The port served (the one asked for, or the one bound when asked for 0)."""
        return None if self._server is None else self._server.server_port

    def close(self) -> None:
        """Stop serving; the reader goes with its MeterProvider."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
