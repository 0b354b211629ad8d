"""``python -m docgen [--check]``: write (or check) the reference pages."""

from docgen.pages import main

raise SystemExit(main())
