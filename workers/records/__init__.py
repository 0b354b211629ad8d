"""Each review's memory: attempts, labelled outcomes, bookkeeping marks, calibration.

Kept in Redis, and built once per process in ``Deps``; no module keeps a store of its own.
"""
