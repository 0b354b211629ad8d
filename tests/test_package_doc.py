"""docs/packages.md quotes what the package benches last measured, never a hand-copied figure."""

from __future__ import annotations

from bench import package_figures


def test_the_package_page_is_derived_from_the_current_figures() -> None:
    assert package_figures.main(["--check"]) == 0, "run python -m bench.package_figures"


def test_the_page_names_every_setting_it_adds() -> None:
    page = package_figures.DOC.read_text(encoding="utf-8")
    for setting in (
        "WINDAGS_PACKAGE_INDEX_URL",
        "WINDAGS_PACKAGE_ALLOWLIST",
        "WINDAGS_PACKAGE_PRESENT_TTL_S",
        "WINDAGS_PACKAGE_ABSENT_TTL_S",
        "WINDAGS_PACKAGE_INDEX_TIMEOUT_S",
        "WINDAGS_PACKAGE_INDEX_BUDGET_S",
    ):
        assert setting in page
