"""docs/reference/redis-keys.md: every key ``workers.keys.Keys`` builds, and the queues.

Each public property and method of ``Keys`` is called with placeholders for its arguments
(``<dag_id>``), once as one Redis spells it and once as a Redis Cluster does (hash-tagged);
its docstring says what it holds. The queue lists and in-flight sets are spelled for every
``Queue``, and the task names with the queue each is routed to: a key, queue or task added
to the code is on the page after the next run.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

from docgen.attribute_docs import attribute_docs
from docgen.markdown import NOTICE, code, first_paragraph, table
from workers.fleet.queues import TASK_ROUTES, Queue, TaskName
from workers.keys import Keys

PAGE = "reference/redis-keys.md"
PREFIX = "<prefix>"
#: Parameters spelled with every queue's name rather than a placeholder.
QUEUE_PARAMETERS = ("name", "queue")


def members() -> Iterator[tuple[str, Any]]:
    """The public keys of ``Keys``, in the order the class declares them."""
    for name, member in vars(Keys).items():
        if name.startswith("_") or name in ("prefix", "tagged"):
            continue
        if isinstance(member, property) or inspect.isfunction(member):
            yield name, member


def _required(function: Callable[..., Any]) -> list[str]:
    parameters = list(inspect.signature(function).parameters.values())[1:]
    return [p.name for p in parameters if p.default is inspect.Parameter.empty]


def spellings(name: str, member: Any) -> list[tuple[str, str]]:
    """(one Redis, a cluster) spellings of one key; one pair per queue for queue keys."""
    plain, tagged = Keys(PREFIX), Keys(PREFIX, tagged=True)
    if isinstance(member, property):
        return [(getattr(plain, name), getattr(tagged, name))]
    required = _required(member)
    if required and required[0] in QUEUE_PARAMETERS:
        return [(getattr(plain, name)(q.value), getattr(tagged, name)(q.value)) for q in Queue]
    placeholders = [f"<{parameter}>" for parameter in required]
    return [(getattr(plain, name)(*placeholders), getattr(tagged, name)(*placeholders))]


def key_rows() -> list[tuple[str, str, str, str]]:
    """One row per key spelling."""
    rows = []
    for name, member in members():
        doc = member.fget.__doc__ if isinstance(member, property) else member.__doc__
        for one, cluster in spellings(name, member):
            if not isinstance(one, str):  # a group of keys (``of_dag``), each in its own row
                continue
            shown = "same" if cluster == one else code(cluster)
            rows.append((code(one), shown, code(f"Keys.{name}"), first_paragraph(doc)))
    return rows


def task_rows() -> list[tuple[str, str, str]]:
    """Every Celery task name, the queue it is routed to and what it does."""
    return [
        (code(task.value), code(TASK_ROUTES[task.value]["queue"]), _doc(TaskName, task.name))
        for task in TaskName
    ]


def _doc(enum: type[Any], member: str) -> str:
    """A StrEnum member's docstring, as the source writes it under the member."""
    return first_paragraph(attribute_docs(enum).get(member))


def render() -> str:
    """The whole page."""
    queues = [
        (code(q.value), code(Keys(PREFIX).queue(q.value)), _doc(Queue, q.name)) for q in Queue
    ]
    lines = [
        NOTICE,
        "# Redis keys, streams and queues",
        "",
        "Every key the fleet writes starts with its prefix (`WINDAGS_KEY_PREFIX`, default",
        "`windags`), kombu's included: the transport puts `<prefix>:broker:` in front of every",
        "key and pub/sub channel it names, so besides the rows below the broker also holds kombu's",
        "`_kombu.binding.*` tables, the `unacked` restore mutex and the remote-control reply lists",
        "and channels under that prefix. With the state on a Redis Cluster",
        "(`WINDAGS_STATE_REDIS_URL=cluster://...`) a DAG's and its reviews' keys carry one hash",
        "tag, the first `:`-part of the DAG id in braces, so each script touches one slot; on",
        "one Redis or Sentinel the names are as in the first column.",
        "",
        "## Queues",
        "",
        *table(("queue", "list (waiting messages)", "what its workers do"), queues),
        "",
        *table(("task", "queue", "what it does"), task_rows()),
        "",
        "## Keys",
        "",
        *table(("key (one Redis)", "on a Redis Cluster", "built by", "what it holds"), key_rows()),
        "",
    ]
    return "\n".join(lines)
