"""The learned router's shell: the calibration model in Redis, its refit and its report.

The engine (``workers.evaluate.escalation.calibration``) prices and fits; this package stores the
fitted model, serves it to routers from a per-process cache, and refits it from the
outcome store off the hot path (issue 15).
"""
