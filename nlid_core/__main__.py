"""``python -m nlid_core``: see :mod:`nlid_core.cli`."""

import sys

from .cli import main

sys.exit(main())
