"""Observability: OpenTelemetry setup, the spans a review makes, metrics, Prometheus."""
