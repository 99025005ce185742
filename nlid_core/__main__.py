"""``python -m nlid_core``: see :mod:`nlid_core.cli`."""

import sys

from .allocator import tune_for_command

tune_for_command()  # a one-shot process: reuse faulted-in heap pages (see nlid_core.allocator)

from .cli import main  # noqa: E402

sys.exit(main())
