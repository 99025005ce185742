"""In the forkserver (which imports this package first): single-threaded numerics, then import and warm
up the core once so that every worker forked from it starts with the kernels loaded."""

from __future__ import annotations

import logging
import sys
from importlib import import_module
from multiprocessing import forkserver

from nlid_core.isolation import single_threaded

from .settings import PRELOAD

_LOG = logging.getLogger(__name__)


def _imported_by_forkserver() -> bool:
    target = forkserver.main.__code__
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is target:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _prepare_forkserver() -> None:
    single_threaded()
    try:
        for module in PRELOAD:
            import_module(module)
        from nlid_core.simulate import warm_up

        warm_up()
    except Exception:  # a worker then imports and compiles on its own: slower, not wrong
        _LOG.warning("the job forkserver could not warm up", exc_info=True)


if _imported_by_forkserver():
    _prepare_forkserver()
