"""References checked against the world: what to look up, and what the answers mean.

Pure like the rest of the engine: the network lane (``workers.lookups``) fetches, and its
answers come back here as data (``schemas.references``).
"""

from workers.evaluate.references.apply import with_lookups
from workers.evaluate.references.plan import plan_lookups
from workers.evaluate.references.statuses import TABLE, Caching, caching_of, outcome_of_status

__all__ = ["TABLE", "Caching", "caching_of", "outcome_of_status", "plan_lookups", "with_lookups"]
