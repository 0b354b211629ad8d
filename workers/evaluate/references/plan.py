"""What one review needs looked up in the world: the cited URLs, capped per review.

Pure and cheap: an output that names no ``http`` and no ``doi`` is answered by two
substring tests, and its review takes today's path.
"""

from __future__ import annotations

from schemas.references import MAX_REFERENCES, CitedUrl, LookupPlan
from schemas.request import ReviewRequest
from workers.evaluate.references.extract import cited_urls
from workers.evaluate.wall.grounding.links import stated_texts
from workers.evaluate.wall.packages import PackageCheck, packages_to_confirm


def plan_lookups(
    request: ReviewRequest,
    *,
    fetch_urls: bool,
    max_urls: int,
    packages: PackageCheck | None = None,
) -> LookupPlan:
    """The URLs to fetch (at most ``max_urls``), those skipped, and the names to confirm.

    ``packages``: the check Stage 1 ran, whose names the live index must confirm (None:
    none). ``fetch_urls`` off (the default deployment): nothing is planned for URLs, so the
    review never waits on the network for them.
    """
    names = packages_to_confirm(request, packages) if packages is not None else ()
    content = request.output.content
    if not fetch_urls or ("http" not in content and "doi" not in content.lower()):
        return LookupPlan(packages=names)
    found: list[CitedUrl] = []
    overlong: list[CitedUrl] = []
    seen: set[str] = set()
    for text in stated_texts(request.output):
        citations = cited_urls(text)
        found.extend(c for c in citations.urls if c.url not in seen)
        seen.update(c.url for c in citations.urls)
        overlong.extend(citations.overlong)
    room = MAX_REFERENCES - min(len(found), max_urls)
    listed_overlong = overlong[: room // 2]
    skipped = found[max_urls:][: room - len(listed_overlong)]
    unlisted = len(overlong) + len(found[max_urls:]) - len(listed_overlong) - len(skipped)
    return LookupPlan(
        packages=names,
        urls=tuple(found[:max_urls]),
        skipped=tuple(skipped),
        overlong=tuple(listed_overlong),
        unlisted=unlisted,
    )
