"""A disk cache of compiled term programs, so a process need not import sympy to use known terms.

Deriving a term's exact derivatives and compiling them takes sympy (about half a second of start-up
for a CLI call or a dashboard worker). The result of :meth:`TermDef._compiled` is plain integer and
float arrays plus two facts (inertial, linear parameters); it is stored as ``.npz`` (read with
``allow_pickle=False``) under a key hashing everything it depends on: the term's text, the program
format, the source of the compiler modules, the nlid and sympy versions. Files are written atomically and checked on reading (op codes,
register indices in range), because the compiled evaluator does not bounds-check: a damaged or
foreign file is ignored and rewritten, never trusted.

Location: ``NLID_PROGRAM_CACHE`` (``off`` disables it), else ``$XDG_CACHE_HOME/nlid/programs``, else
``~/.cache/nlid/programs``. A directory that cannot be written just means no cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from .program import OPS, Program

__all__ = ["cache_dir", "load", "save", "key_for"]

#: Bump when the stored layout or the meaning of the programs changes.
FORMAT = 1
PROGRAMS = ("program", "steady", "regressor")
_FIELDS = ("registers", "op", "a", "b", "dst", "outputs")


def cache_dir() -> Path | None:
    """The cache directory, or None when disabled."""
    env = os.environ.get("NLID_PROGRAM_CACHE", "").strip()
    if env.lower() == "off":
        return None
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "nlid" / "programs"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


@lru_cache(maxsize=1)
def _compiler_digest() -> str:
    """Hash of the source of the modules that turn a term into programs (a change there is a new key)."""
    h = hashlib.sha256()
    for name in ("base.py", "expr.py", "program.py", "units.py", "cache.py", "custom.py"):
        h.update((Path(__file__).with_name(name)).read_bytes())
    return h.hexdigest()


def key_for(identity: Any) -> str:
    """Hash of a term's identity (JSON-able) with the format, the compiler's source and the versions
    that shape the result."""
    from .._version import __version__

    text = json.dumps([FORMAT, __version__, _version("sympy"), _compiler_digest(), identity], sort_keys=True,
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _valid(p: Program) -> bool:
    r = p.registers.size
    arrays = (p.op, p.a, p.b, p.dst, p.outputs)
    if p.registers.dtype != np.float64 or any(x.dtype != np.int64 or x.ndim != 1 for x in arrays):
        return False
    if not (p.op.size == p.a.size == p.b.size == p.dst.size) or not 0 <= p.n_inputs <= r:
        return False
    if p.op.size and (p.op.min() < 1 or p.op.max() > max(OPS.values())):
        return False
    idx = np.concatenate([p.a, p.b, p.dst, p.outputs])
    if idx.size and (idx.min() < 0 or idx.max() >= r):
        return False
    return not (p.dst.size and p.dst.min() < p.n_inputs)


def load(key: str, *, folder: Path | None = None) -> dict[str, Any] | None:
    """The stored compilation for ``key`` (in ``folder``, default :func:`cache_dir`), or None (absent,
    unreadable or failing the checks)."""
    folder = cache_dir() if folder is None else folder
    if folder is None:
        return None
    path = folder / f"{key}.npz"
    try:
        with np.load(path, allow_pickle=False) as z:
            out: dict[str, Any] = {"inertial": bool(z["inertial"][0]), "linear": tuple(str(s) for s in z["linear"])}
            for name in PROGRAMS:
                prog = Program(
                    n_inputs=int(z[f"{name}_n_inputs"][0]),
                    **{f: np.ascontiguousarray(z[f"{name}_{f}"]) for f in _FIELDS},
                )
                if not _valid(prog):
                    return None
                out[name] = prog
            return out
    except (OSError, KeyError, ValueError, IndexError, TypeError):
        return None


def save(key: str, compiled: dict[str, Any], *, folder: Path | None = None) -> None:
    """Store a compilation in ``folder`` (default :func:`cache_dir`); best effort: a directory that
    cannot be written is skipped."""
    folder = cache_dir() if folder is None else folder
    if folder is None:
        return
    arrays: dict[str, np.ndarray] = {
        "inertial": np.array([int(compiled["inertial"])]),
        "linear": np.array(list(compiled["linear"]), dtype=str),
    }
    for name in PROGRAMS:
        prog: Program = compiled[name]
        arrays[f"{name}_n_inputs"] = np.array([prog.n_inputs])
        for f in _FIELDS:
            arrays[f"{name}_{f}"] = getattr(prog, f)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, folder / f"{key}.npz")
    except OSError:
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
