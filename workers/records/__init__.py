"""Each review's memory: attempts, labelled outcomes, bookkeeping marks, calibration.

Kept in Redis. A worker builds it once, in ``Deps``: ``Deps.records`` (``Bookkeeping``:
the history read before a verdict, the bookkeeping written with a result's entry) and
``Deps.calibration``; no module keeps a store of its own.
"""
