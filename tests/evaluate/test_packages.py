"""Packages that exist: the Wall's check of imports, install commands and requirements.

The snapshot and the mapping are the shipped real data (``workers/evaluate/wall/packages/
data``); answers of a live index are given as data, as the network side hands them over.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Any

import pytest

from schemas.packages import IndexAnswer, PackageAnswer
from schemas.result import Decision
from schemas.stages import Certainty, IssueCode
from workers.errors import InvalidRequest
from workers.evaluate import run_stage1
from workers.evaluate.findings import Finding
from workers.evaluate.wall.packages import PackageCheck, package_findings, packages_to_confirm
from workers.evaluate.wall.packages.check import MAX_FINDINGS, MAX_LOOKUPS
from workers.evaluate.wall.packages.installs import install_names
from workers.evaluate.wall.packages.snapshot import (
    distributions_of,
    is_listed,
    popular,
    snapshot_date,
)
from workers.judges.builtin import BuiltinJudge
from workers.review import review

from .builders import PRICE, request

#: A module the rest of the Wall accepts: only its imports change from test to test.
MODULE = (
    "{imports}\n\n\n"
    "def fetch_titles(urls: list[str]) -> list[str]:\n"
    '    """Fetch each page and return the text of its first heading, in order."""\n'
    "    titles = []\n"
    "    for url in urls:\n"
    "        titles.append(url.rsplit('/', 1)[-1])\n"
    "    return titles\n"
)


def python(imports: str, **fields: Any) -> Any:
    return request(output={"kind": "python", "content": MODULE.format(imports=imports)}, **fields)


def markdown(content: str, **fields: Any) -> Any:
    return request(output={"kind": "markdown", "content": content}, **fields)


def findings(req: Any, check: PackageCheck | None = None) -> list[Finding]:
    return package_findings(req, check or PackageCheck())


def answer(name: str, said: IndexAnswer, status: int | None) -> PackageAnswer:
    return PackageAnswer(name=name, answer=said, status=status, checked_at=datetime.now(UTC))


def test_the_issues_install_line_is_a_definite_finding_naming_the_nearest_project() -> None:
    req = markdown("Install it first:\n\n`pip install flask-jwt-autorefresh`\n\nThen run it.")
    (found,) = findings(req)
    assert found.issue.code is IssueCode.UNKNOWN_PACKAGE
    assert found.issue.certainty is Certainty.DEFINITE
    assert "did you mean `flask-jwt-extended`?" in found.issue.message
    assert f"snapshot of {snapshot_date()}" in found.issue.message
    result = review(req, BuiltinJudge(), stage2_price=PRICE)
    assert result.decision is Decision.ITERATE
    assert result.feedback is not None
    said = [i for i in result.feedback.specific_issues if "flask-jwt-autorefresh" in i.issue]
    assert said
    assert said[0].fix.startswith("Install `flask-jwt-extended` if that is what you meant")


@pytest.mark.parametrize(
    "line",
    [
        "$ pip install requests-oauthlib-async-helpers",
        "python -m pip install -U requests-oauthlib-async-helpers",
        "uv add 'requests-oauthlib-async-helpers[cli]>=1'",
        "poetry add requests-oauthlib-async-helpers@^1.2",
        "!pip install requests-oauthlib-async-helpers",
        "requests-oauthlib-async-helpers>=1.2.0",
    ],
)
def test_each_install_form_and_a_requirement_line_name_the_project(line: str) -> None:
    (found,) = findings(markdown(f"Setup:\n\n    {line}\n"))
    assert found.issue.certainty is Certainty.DEFINITE
    assert found.issue.field == "requests-oauthlib-async-helpers"


@pytest.mark.parametrize(
    "text",
    [
        "You can pip install it from the index with the usual tools.",
        "pip install -e . && pip install -r requirements.txt",
        "pip install git+https://example.invalid/a/b.git ./local/path dist/x-1.0.whl",
        "pip install <package-name>",
        "pip install requests 'celery[redis]>=5' pydantic==2.7.1 PyYAML",
    ],
)
def test_prose_paths_urls_placeholders_and_real_projects_are_not_flagged(text: str) -> None:
    assert findings(markdown(text)) == []


def test_an_index_named_by_the_command_makes_the_finding_suspect() -> None:
    req = markdown(
        "`pip install acme-payments-core --index-url https://pkgs.example.invalid/simple`"
    )
    (found,) = findings(req)
    assert found.issue.certainty is Certainty.SUSPECT
    assert "another index" in found.issue.message


def test_an_unknown_import_without_an_environment_is_suspect_and_never_sends_back() -> None:
    req = python("import redis_lock_manager_async\nimport requests")
    (found,) = findings(req)
    assert (found.issue.code, found.issue.certainty) == (
        IssueCode.UNKNOWN_IMPORT,
        Certainty.SUSPECT,
    )
    assert "did you mean `python-redis-lock`?" in found.issue.message
    with_it = review(req, BuiltinJudge(), stage2_price=PRICE)
    control = review(python("import json\nimport requests"), BuiltinJudge(), stage2_price=PRICE)
    assert control.decision is Decision.ACCEPT
    assert with_it.decision is Decision.ACCEPT
    assert any(i.code is IssueCode.UNKNOWN_IMPORT for i in with_it.stage1.wall.issues)


def test_import_names_that_differ_from_their_distribution_are_mapped() -> None:
    imports = "import yaml, cv2, PIL, bs4, sklearn, jwt, serial, attr, dateutil\n"
    imports += "from google.protobuf import message\nfrom google.cloud import storage"
    assert findings(python(imports)) == []
    assert distributions_of("PIL") == ("pillow",)
    assert "pyyaml" in distributions_of("yaml")


def test_no_standard_library_module_is_ever_flagged() -> None:
    names = sorted(n for n in sys.stdlib_module_names if n.isidentifier())
    assert len(names) > 200
    assert findings(python("\n".join(f"import {n}" for n in names))) == []


def test_relative_guarded_own_and_allowed_imports_are_not_flagged() -> None:
    imports = (
        "from . import models\nfrom .sibling import thing\n"
        "try:\n    import ujson_turbo_fast as fastjson\nexcept ImportError:\n    fastjson = None\n"
        "import acme_billing\nimport acme_internal_tools"
    )
    req = python(imports, task="Add a helper to the acme_billing package.")
    assert findings(req, PackageCheck(allowed=("acme-internal-*",))) == []
    assert [f.issue.field for f in findings(req)] == ["acme_internal_tools"]


def test_a_declared_environment_makes_an_undeclared_import_definite() -> None:
    contract = {
        "requirements": ["requests>=2.31", "PyYAML", "python-dotenv", "google-cloud-storage"]
    }
    imports = (
        "import requests\nimport yaml\nimport dotenv\nfrom google.cloud import storage\n"
        "import httpx\nimport made_up_helpers"
    )
    found = findings(python(imports, contract=contract))
    assert [(f.issue.field, f.issue.certainty) for f in found] == [
        ("httpx", Certainty.DEFINITE),
        ("made_up_helpers", Certainty.DEFINITE),
    ]
    assert all(f.issue.code is IssueCode.UNDECLARED_IMPORT for f in found)
    assert "shipped by httpx" in found[0].issue.message


def test_an_empty_environment_allows_the_standard_library_only() -> None:
    req = python("import json\nimport requests", contract={"requirements": []})
    assert [f.issue.field for f in findings(req)] == ["requests"]


def test_requirements_that_do_not_parse_are_refused_naming_the_field() -> None:
    with pytest.raises(InvalidRequest) as refused:
        python("import json", contract={"requirements": ["requests>=>2"]})
    assert refused.value.field == "contract.requirements"


def test_the_live_index_settles_names_newer_than_the_snapshot() -> None:
    req = markdown("`pip install brand-new-project-xyz`\n\n`pip install another-new-one-xyz`")
    live = PackageCheck(live_index=True)
    assert packages_to_confirm(req, PackageCheck()) == ()
    assert packages_to_confirm(req, live) == ("another-new-one-xyz", "brand-new-project-xyz")
    unasked = findings(req, live)
    assert [f.issue.certainty for f in unasked] == [Certainty.SUSPECT, Certainty.SUSPECT]
    assert "could not be asked" in unasked[0].issue.message
    answered = live.answered(
        {
            "brand-new-project-xyz": answer("brand-new-project-xyz", IndexAnswer.PRESENT, 200),
            "another-new-one-xyz": answer("another-new-one-xyz", IndexAnswer.ABSENT, 404),
        }
    )
    (found,) = findings(req, answered)
    assert (found.issue.field, found.issue.certainty) == ("another-new-one-xyz", Certainty.DEFINITE)
    assert "HTTP 404" in found.issue.message
    down = live.answered(
        {"another-new-one-xyz": answer("another-new-one-xyz", IndexAnswer.UNREACHABLE, 503)}
    )
    assert {f.issue.certainty for f in findings(req, down)} == {Certainty.SUSPECT}


def test_imports_under_a_declared_environment_need_no_look_up() -> None:
    req = python("import made_up_helpers", contract={"requirements": ["requests"]})
    assert packages_to_confirm(req, PackageCheck(live_index=True)) == ()
    assert packages_to_confirm(python("import made_up_helpers"), PackageCheck(live_index=True)) == (
        "made-up-helpers",
    )


def test_stage1_without_a_check_uses_the_snapshot_and_grades_the_definite_finding() -> None:
    report = run_stage1(markdown("Run `pip install flask-jwt-autorefresh` to start."))
    issues = [i for i in report.stage1.wall.issues if i.code is IssueCode.UNKNOWN_PACKAGE]
    assert [i.certainty for i in issues] == [Certainty.DEFINITE]
    gate = report.quality.grounding.gate
    assert gate is not None
    assert gate <= 0.55


def test_hostile_text_is_bounded_and_its_names_never_reach_a_look_up() -> None:
    lines = [f"pip install hallucinated-name-{i:05d}" for i in range(10_000)]
    lines += [
        "pip install ../../etc/passwd 'x; rm -rf /' é-unicode-name",
        "pip install " + "a" * 100_000,
    ]
    req = markdown("\n".join(lines))
    found = findings(req)
    assert len(found) == MAX_FINDINGS
    names = packages_to_confirm(req, PackageCheck(live_index=True))
    assert len(names) == MAX_LOOKUPS
    assert all(n.startswith("hallucinated-name-") for n in names)
    assert install_names("pip install é-unicode-name ../x") == []


def test_the_snapshot_never_calls_a_popular_project_absent() -> None:
    names = popular()
    assert len(names) > 10_000
    assert all(is_listed(n) for n in names)
    assert not is_listed("flask-jwt-autorefresh")
    assert datetime.fromisoformat(snapshot_date())
