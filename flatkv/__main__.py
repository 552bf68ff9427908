"""``python -m flatkv``: see flatkv.cli."""

import sys

from flatkv.cli import main

sys.exit(main())
