"""``python -m workers.learning``: see ``workers.learning.report``."""

import sys

from workers.learning.report import main

sys.exit(main())
