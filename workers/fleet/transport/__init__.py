"""kombu's Redis transport made safe: a take that a kill -9 cannot lose.

Messages are inspected before kombu sees them and quarantined when unreadable; broadcasts
come through Redis restarts; Sentinel; every key under the deployment's prefix.
"""
