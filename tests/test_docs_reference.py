"""The reference pages say what the code declares: every setting, command, key and span.

``python -m docgen`` writes them; here its ``--check`` must pass, and the pages must name
what the code has, so a setting or command added without regenerating fails the suite.
"""

from __future__ import annotations

import pytest

from docgen import pages, settings_page
from docgen.cli_page import commands
from workers.keys import Keys
from workers.settings import Settings

DOCS = pages.DOCS


def test_the_reference_pages_are_current() -> None:
    assert pages.main(["--check"]) == 0, "run: python -m docgen"


def test_the_settings_page_names_every_setting_with_its_default() -> None:
    page = (DOCS / settings_page.PAGE).read_text(encoding="utf-8")
    for name in Settings.model_fields:
        assert f"`{settings_page.env_name(name)}`" in page
    assert "| `WINDAGS_KEY_PREFIX` | string | `windags` |" in page


def test_the_cli_page_names_every_command_and_option() -> None:
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    found = list(commands())
    assert {name for _, name in found} >= {"demo", "fleet", "submit", "verdict", "register"}
    for ctx, _ in found:
        assert f"## {ctx.command_path}\n" in page
        for param in ctx.command.get_params(ctx):
            for option in param.opts:
                if option.startswith("--") and option != "--help":
                    assert f"`{option}" in page, (ctx.command_path, option)


def test_the_cli_walk_reaches_nested_commands() -> None:
    assert {ctx.command_path for ctx, _ in commands()} >= {
        "windags-eval dag show",
        "windags-eval outcomes report",
    }


def test_every_key_family_is_on_the_keys_page() -> None:
    page = (DOCS / "reference" / "redis-keys.md").read_text(encoding="utf-8")
    keys = Keys("<prefix>")
    assert f"`{keys.dead_letter}`" in page and f"`{keys.quarantine}`" in page
    assert f"`{keys.results('<dag_id>')}`" in page


def test_a_setting_without_a_docstring_stops_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    field = Settings.model_fields["key_prefix"]
    monkeypatch.setattr(field, "description", None)
    with pytest.raises(settings_page.UndocumentedSettingError, match="key_prefix"):
        settings_page.rows()
