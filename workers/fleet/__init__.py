"""The Celery fleet: queues, the app, thin tasks, and one handler per stage.

stage1 (Floor + Wall) -> router (escalation) -> stage2 (Ceiling) -> the DAG's stream.
Start a worker with ``celery -A workers.fleet.worker worker -Q <queue>``.
"""
