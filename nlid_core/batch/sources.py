"""The records of a grid batch: file names and glob patterns resolved under the spec's folder (bounded in
entries and files; nothing outside that folder, through links included, unless allowed), with the columns, units and
preparation the spec gives them."""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataValidationError, ModelSpecError
from .fields import _boolean, _number, _string, _strings, _table, _unknown

__all__ = ["GLOB_ENTRIES_ENV", "MAX_FILES", "RecordSource"]

#: The keys of a ``[records]`` table.
_RECORD_KEYS = {"files", "columns", "units", "scale", "fs", "resample", "rows", "lowpass"}


#: Most directory entries the file patterns of one spec may visit.
GLOB_ENTRIES_ENV = "NLID_GLOB_MAX_ENTRIES"


#: Most record files of a grid (after expanding globs).
MAX_FILES = 2_000


@dataclass(frozen=True, kw_only=True)
class RecordSource:
    """The record files of a grid and how to read them (the loading options of ``identify``).

    Attributes
    ----------
    files : tuple of pathlib.Path
        Resolved paths, in the order of the patterns, each pattern's matches sorted; no repeats.
    patterns : tuple of str
        As written in the spec.
    columns, units : str, mapping or None
        ``--columns`` / ``--units`` text or a table channel -> column / unit. A ``scale`` (``"f=35.15N"``, or
        the table ``[records.scale]`` with ``f = "35.15N"``: a drive gain from volts to newtons) is merged
        into ``units`` as each channel's factor to SI, as ``--scale`` is on the command line.
    fs : float or None, Hz
    resample : bool
    rows : str or None
        ``"START:STOP"``.
    lowpass : float or None, Hz
        Zero-phase low-pass cut-off applied after loading.
    """

    files: tuple[Path, ...]
    patterns: tuple[str, ...]
    columns: str | Mapping[str, str] | None = None
    units: str | Mapping[str, str] | None = None
    fs: float | None = None
    resample: bool = False
    rows: str | None = None
    lowpass: float | None = None


class _Walk:
    """Expands the file patterns of one spec: inside the spec's folder unless ``outside``, visiting at
    most ``NLID_GLOB_MAX_ENTRIES`` directory entries in all (a ``**`` from the file-system root is
    refused after that many, not after walking the disk); symbolic links to folders are not followed."""

    def __init__(self, base_dir: Path, outside: bool) -> None:
        from ..limits import budget

        self.base = base_dir.resolve()
        self.outside = outside
        self.limit = int(budget(GLOB_ENTRIES_ENV) or 0)
        self.visited = 0

    def check_inside(self, path: Path, pat: str) -> None:
        if self.outside:
            return
        where = Path(os.path.normpath(path))
        try:
            inside = where.resolve() if where.exists() else where
        except (OSError, RuntimeError):
            inside = where
        if not (inside == self.base or self.base in inside.parents):
            raise DataValidationError(
                f"[records] `files`: {pat!r} reaches outside the spec's folder; give paths inside it, or run the"
                " command line with --allow-outside to read files elsewhere")

    def matches(self, full: Path, pat: str) -> list[Path]:
        parts = full.parts
        fixed = next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))
        root = Path(*parts[:fixed]) if fixed else Path(full.anchor or ".")
        self.check_inside(root, pat)  # a link to a folder outside is refused before it is walked
        found: list[Path] = []
        self._walk(root, list(parts[fixed:]), pat, found)
        return sorted(found)

    def _entries(self, folder: Path, pat: str) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(folder) as it:
                out = []
                for entry in it:
                    self.visited += 1
                    if self.visited > self.limit:
                        raise DataValidationError(
                            f"[records] `files`: {pat!r} visits more than {self.limit:,} directory entries; give a"
                            f" narrower pattern (an administrator can raise the limit with {GLOB_ENTRIES_ENV})")
                    out.append(entry)
                return out
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return []

    def _walk(self, folder: Path, rest: list[str], pat: str, found: list[Path]) -> None:
        # iterative: (folder, remaining pattern parts)
        stack: list[tuple[Path, tuple[str, ...]]] = [(folder, tuple(rest))]
        done: set[tuple[Path, tuple[str, ...]]] = set()
        while stack:
            where, parts = stack.pop()
            if (where, parts) in done:
                continue
            done.add((where, parts))
            if not parts:
                if where.is_file():
                    found.append(where)
                continue
            head, tail = parts[0], parts[1:]
            if head == "**":
                stack.append((where, tail))  # zero folders
                for e in self._entries(where, pat):
                    if e.is_dir(follow_symlinks=False) and not e.name.startswith("."):
                        stack.append((Path(e.path), parts))
                continue
            if not glob.has_magic(head):
                stack.append((where / head, tail))
                continue
            for e in self._entries(where, pat):
                if fnmatch.fnmatchcase(e.name, head) and not (e.name.startswith(".") and not head.startswith(".")):
                    if tail and not e.is_dir(follow_symlinks=False):
                        continue
                    stack.append((Path(e.path), tail))


def _records(data: Any, base_dir: Path, outside: bool = False) -> RecordSource:
    tab = _table(data, "[records]")
    _unknown(tab, _RECORD_KEYS, "[records]")
    if "files" not in tab:
        raise ModelSpecError("[records]: give `files` (paths relative to the spec file; globs allowed)")
    if isinstance(tab["files"], str):
        patterns: tuple[str, ...] = (_string(tab["files"], "[records]", "files").strip(),)
    else:
        patterns = _strings(tab["files"], "[records]", "files", limit=MAX_FILES)
    if not patterns:
        raise ModelSpecError("[records] `files` is empty")
    files: list[Path] = []
    seen: set[Path] = set()
    walk = _Walk(base_dir, outside)
    for pat in patterns:
        full = Path(pat).expanduser()
        full = full if full.is_absolute() else base_dir / full
        walk.check_inside(full, pat)
        if glob.has_magic(pat):
            matches = walk.matches(full, pat)
            if not matches:
                raise DataValidationError(f"[records] `files`: no file matches {pat!r}")
        else:
            if not full.is_file():
                raise DataValidationError(f"[records] `files`: no such file {pat!r}")
            matches = [full]
        for m in matches:
            r = m.resolve()
            walk.check_inside(r, pat)
            if r not in seen:
                seen.add(r)
                files.append(r)
            if len(files) > MAX_FILES:
                raise ModelSpecError(f"[records] `files` matches more than {MAX_FILES} files")
    kw: dict[str, Any] = {}
    for key in ("columns", "units"):
        if key in tab:
            val = tab[key]
            if isinstance(val, Mapping):
                kw[key] = {_string(k, "[records]", key, limit=64): _string(v, "[records]", f"{key}.{k}", limit=200)
                           for k, v in val.items()}
            else:
                kw[key] = _string(val, "[records]", key)
    if "scale" in tab:
        kw["units"] = _with_scale(kw.get("units"), tab["scale"])
    if "fs" in tab:
        kw["fs"] = _number(tab["fs"], "[records]", "fs", positive=True)
    if "resample" in tab:
        kw["resample"] = _boolean(tab["resample"], "[records]", "resample")
    if "rows" in tab:
        kw["rows"] = _string(tab["rows"], "[records]", "rows", limit=64)
    if "lowpass" in tab:
        kw["lowpass"] = _number(tab["lowpass"], "[records]", "lowpass", positive=True)
    return RecordSource(files=tuple(files), patterns=patterns, **kw)


def _with_scale(units: str | Mapping[str, str] | None, scale: Any) -> dict[str, str]:
    """``units`` with the channels of a ``scale`` entry added as factors to SI; a channel in both is refused."""
    from ..io import parse_scale_spec, parse_units_spec

    if isinstance(scale, Mapping):
        text = ",".join(f"{_string(k, '[records]', 'scale', limit=64)}={_string(v, '[records]', f'scale.{k}', limit=64)}"
                        for k, v in scale.items())
    else:
        text = _string(scale, "[records]", "scale", limit=400)
    factors = parse_scale_spec(text)
    given = parse_units_spec(units) if isinstance(units, str) else dict(units or {})
    both = sorted(set(factors) & set(given))
    if both:
        raise ModelSpecError(f"[records] gives `{both[0]}` in both `units` and `scale`: `scale` already sets its unit")
    return {**given, **factors}
