"""The docs site's reference pages, written from the code: ``python -m docgen [--check]``.

Each module renders one part of ``docs/reference/`` from what the code declares (the
settings model, the CLI, the JSON Schemas, the key builder, the instruments), so a setting,
command, field or key added anywhere shows up on the next run, and a test fails while the
pages on disk say otherwise.
"""
