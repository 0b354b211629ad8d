"""A local HTTP server that speaks the Anthropic Messages API, with scriptable faults.

The real ``anthropic`` SDK is tested against it; nothing here is used in production.
"""
