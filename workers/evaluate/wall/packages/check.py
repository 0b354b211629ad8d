"""Packages that exist: the certainty of each package an output uses.

- An install command or a requirement naming a project the index lacks: **definite** (a
  reader who runs it installs nothing, or whoever registers the name next). Suspect when
  the command names another index, or the live index could not be asked.
- An import no declared distribution provides, when ``contract.requirements`` declares the
  environment: **definite** (the code fails on its first line there).
- An import no known project provides, with no environment declared: **suspect**. It may
  be a module of the user's own, so it never sends an output back by itself.

Never flagged: the standard library, relative imports, names in the task or the sources
(the project's own), and the operator's allowed names. Each finding names the nearest
popular project.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from schemas.packages import IndexAnswer, PackageAnswer
from schemas.quality import Dimension
from schemas.request import NodeOutput, OutputContract, ReviewRequest, Source
from schemas.stages import Certainty, IssueCode
from workers.evaluate.findings import Finding, finding
from workers.evaluate.wall.packages.environment import Environment
from workers.evaluate.wall.packages.nearest import nearest_popular
from workers.evaluate.wall.packages.policy import PackageCheck
from workers.evaluate.wall.packages.references import Reference, Use, own_names, references
from workers.evaluate.wall.packages.snapshot import is_listed, snapshot_date

#: The codes this check writes; the evidence behind each one sets its certainty.
PACKAGE_CODES = frozenset(
    {IssueCode.UNKNOWN_PACKAGE, IssueCode.UNKNOWN_IMPORT, IssueCode.UNDECLARED_IMPORT}
)
#: Most names one review asks the live index about, and most findings it lists.
MAX_LOOKUPS = 20
MAX_FINDINGS = 5
DEFINITE_PENALTY = 0.45
SUSPECT_PENALTY = 0.15


@dataclass
class _Review:
    """One output's references and what settles them."""

    output: NodeOutput
    check: PackageCheck
    task: str | None = None
    sources: Sequence[Source] = ()
    contract: OutputContract | None = None

    @classmethod
    def of(cls, request: ReviewRequest, check: PackageCheck) -> _Review:
        return cls(request.output, check, request.task, request.sources, request.contract)

    @cached_property
    def environment(self) -> Environment | None:
        if self.contract is None or self.contract.requirements is None:
            return None
        return Environment.declared(self.contract.requirements)

    @cached_property
    def own(self) -> frozenset[str]:
        return own_names(self.task, [s.text for s in self.sources])

    def settled(self, ref: Reference) -> bool:
        """Whether nothing is to be said of ``ref`` whatever the index answers."""
        if self.check.allows(ref.name) or ref.name in self.own:
            return True
        if ref.use is Use.IMPORT:
            if self.environment is not None:
                return self.environment.provides(ref.said)
            return bool(ref.provided_by)
        return is_listed(ref.name)

    def unsettled(self) -> list[Reference]:
        """Each package left to judge, once per name and use."""
        seen: set[tuple[bool, str]] = set()
        out: list[Reference] = []
        for ref in references(self.output):
            key = (ref.use is Use.IMPORT, ref.name)
            if key not in seen:
                seen.add(key)
                if not self.settled(ref):
                    out.append(ref)
        return out


def packages_to_confirm(request: ReviewRequest, check: PackageCheck) -> tuple[str, ...]:
    """Names the snapshot lacks whose finding the live index decides; () without one."""
    if not check.live_index:
        return ()
    review = _Review.of(request, check)
    names = {
        ref.name
        for ref in review.unsettled()
        if ref.use is not Use.IMPORT or review.environment is None
    }
    return tuple(sorted(names)[:MAX_LOOKUPS])


def package_findings(request: ReviewRequest, check: PackageCheck) -> list[Finding]:
    """Every package finding of ``request``'s output, at most ``MAX_FINDINGS``."""
    return _findings(_Review.of(request, check))


def check_packages(
    output: NodeOutput,
    check: PackageCheck,
    *,
    task: str | None = None,
    sources: Sequence[Source] = (),
    contract: OutputContract | None = None,
) -> list[Finding]:
    """``package_findings`` over a request's parts (what the Wall holds)."""
    return _findings(_Review(output, check, task, sources, contract))


def _findings(review: _Review) -> list[Finding]:
    """The first ``MAX_FINDINGS``: judging stops there (each one searches a suggestion)."""
    found: list[Finding] = []
    for ref in review.unsettled():
        if len(found) == MAX_FINDINGS:
            break
        judged = _judge(ref, review)
        if judged is not None:
            found.append(judged)
    return found


def _judge(ref: Reference, review: _Review) -> Finding | None:
    live = review.check.live_index
    if ref.use is Use.IMPORT:
        if review.environment is not None:
            return _undeclared(ref)
        answer = review.check.answer_for(ref.name) if live else None
        return None if answer is IndexAnswer.PRESENT else _unknown_import(ref, answer)
    answer = review.check.answer_for(ref.name)
    if answer is IndexAnswer.PRESENT:
        return None
    return _unknown_package(ref, answer, review.check.answers.get(ref.name) if live else None)


def _hint(name: str) -> tuple[str, str]:
    """The question for the message and the advice for the fix, naming the nearest project."""
    nearest = nearest_popular(name)
    if nearest is None:
        return "", ""
    return f"; did you mean `{nearest}`?", f"`{nearest}` if that is what you meant, or "


def _whence(answer: IndexAnswer | None) -> str:
    """Why a name is unknown: the snapshot lacks it, and what the live index said."""
    lacks = f"the index snapshot of {snapshot_date()} lists no such project"
    if answer is IndexAnswer.UNREACHABLE:
        return f"{lacks}, and the index could not be asked"
    if answer is IndexAnswer.ABSENT:
        return lacks
    return f"no project of the index snapshot of {snapshot_date()} ships it"


def _unknown_package(ref: Reference, answer: IndexAnswer, live: PackageAnswer | None) -> Finding:
    sure = answer is IndexAnswer.ABSENT and not ref.private_index
    whence, (hint, advice) = _whence(answer), _hint(ref.name)
    if live is not None and live.answer is IndexAnswer.ABSENT:
        when = f"{live.checked_at:%Y-%m-%d %H:%M} UTC"
        whence = f"the package index has no such project (HTTP {live.status}, {when})"
    if ref.private_index:
        whence += " (the command names another index, which was not asked)"
    what = "requirement" if ref.use is Use.REQUIREMENT else "install command"
    return finding(
        Dimension.GROUNDING,
        IssueCode.UNKNOWN_PACKAGE,
        f"the {what} `{ref.said}` (line {ref.line}) names {ref.name}: {whence}{hint}",
        DEFINITE_PENALTY if sure else SUSPECT_PENALTY,
        field=ref.name,
        fix=f"Install {advice}a project that exists on the package index, or drop {ref.name}",
        certainty=Certainty.DEFINITE if sure else Certainty.SUSPECT,
    )


def _unknown_import(ref: Reference, answer: IndexAnswer | None) -> Finding:
    hint, advice = _hint(ref.name)
    return finding(
        Dimension.GROUNDING,
        IssueCode.UNKNOWN_IMPORT,
        f"import {ref.said} (line {ref.line}): {_whence(answer)}; it may be a module of "
        f"your own{hint}",
        SUSPECT_PENALTY,
        field=ref.said,
        fix=f"Import {advice}a package that exists, or declare the environment "
        "(contract.requirements) if it is your own",
        certainty=Certainty.SUSPECT,
    )


def _undeclared(ref: Reference) -> Finding:
    if ref.provided_by:
        shipped = ", ".join(ref.provided_by[:3])
        why, (hint, advice) = f"shipped by {shipped}, which it does not declare", ("", "")
    else:
        why, (hint, advice) = "no declared distribution ships it", _hint(ref.name)
    return finding(
        Dimension.GROUNDING,
        IssueCode.UNDECLARED_IMPORT,
        f"import {ref.said} (line {ref.line}) is outside the declared environment "
        f"(contract.requirements): {why}{hint}",
        DEFINITE_PENALTY,
        field=ref.said,
        fix=f"Use what contract.requirements declares, or declare {advice}what ships {ref.name}",
        certainty=Certainty.DEFINITE,
    )
