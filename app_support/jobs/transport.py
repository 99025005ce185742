"""How a function, its arguments and its outcome travel between the server and a worker.

A function is sent by reference (module and qualified name, checked to lead back to it); values
are pickled (a TermModel pickles as its identity: term names, settings and the text of typed terms,
rebuilt and re-checked on arrival).
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable
from importlib import import_module
from typing import Any

from .settings import JobError

def _dumps(obj: Any) -> bytes:
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dump(obj)
    return buf.getvalue()


def _loads(data: bytes) -> Any:
    return pickle.loads(data)


def _reference(fn: Callable[..., Any]) -> tuple[str, str]:
    """``(module, qualified name)`` of a top-level function, checked to resolve to ``fn``."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or "<" in qualname or module == "__main__":
        raise JobError(f"{fn!r} cannot run in a worker: it is not a top-level function of an importable module")
    if _resolve((module, qualname)) is not fn:
        raise JobError(f"{module}.{qualname} cannot run in a worker: the name does not lead back to the function")
    return module, qualname


def _resolve(ref: tuple[str, str]) -> Callable[..., Any]:
    obj: Any = import_module(ref[0])
    for part in ref[1].split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[no-any-return]
