"""The human gate: the review queue, verdicts back on the stream, the review page.

Imports point one way: this package reads the engine, the review memory
(``workers.records``) and the results stream; the fleet, the client and the local tools
import it, never the reverse.
"""

from workers.human.gate import HumanGate, build_gate
from workers.human.queue import ClaimStatus, ReviewQueue
from workers.human.verdicts import Recorded, RecordStatus, VerdictDesk, VerdictRefusedError

__all__ = [
    "ClaimStatus",
    "HumanGate",
    "RecordStatus",
    "Recorded",
    "ReviewQueue",
    "VerdictDesk",
    "VerdictRefusedError",
    "build_gate",
]
