"""Suite-wide test configuration.

Under CI, hypothesis runs derandomized: the same examples every run, so a landing is
judged on the code, not on the draw. Local runs keep exploring new examples.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
