"""Reading TOML typed or uploaded by users (batch specs, model files, stage plans, record manifests).

:func:`read_toml` is :func:`tomllib.loads` with the failures a hostile file can cause turned into one
line naming the file and the key: invalid TOML; arrays or inline tables nested so deeply that the
parser would exhaust the interpreter's stack (found by a scan of the text before parsing, so the
parser never recurses that far); and tables nested deeper than :data:`MAX_DEPTH` through dotted
keys or headers (``a.b.c....``), which would make every later walk over the data deep too. No file
nlid reads needs more than four levels.
"""

from __future__ import annotations

import tomllib
from typing import Any

from ._checks import too_deep
from .errors import ModelSpecError

__all__ = ["MAX_DEPTH", "read_toml"]

#: Deepest nesting of tables and arrays accepted.
MAX_DEPTH = 16


def _bracket_depth(text: str) -> tuple[int, int, str] | None:
    """(line, depth, key) of the first place where ``[``/``{`` nest deeper than :data:`MAX_DEPTH` + 2
    (a table header adds two), outside strings and comments; None when nowhere."""
    depth = 0
    line = 1
    key_line = ""
    i, n = 0, len(text)
    quote = ""
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if text.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
            if c == "\n":
                line += 1
            i += 1
            continue
        if c == "\n":
            line += 1
        elif c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            i += len(quote)
            continue
        elif c in "[{":
            if depth == 0:
                start = text.rfind("\n", 0, i) + 1
                key_line = text[start:i].split("=")[0].strip() or text[i:i + 40].split("]")[0].strip("[ ")
            depth += 1
            if depth > MAX_DEPTH + 2:
                return line, depth, key_line[:60]
        elif c in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return None


def read_toml(text: str, source: str, error: type[Exception] = ModelSpecError) -> dict[str, Any]:
    """Parse TOML ``text`` read from ``source`` (a name for messages).

    Raises
    ------
    error (default ModelSpecError)
        Invalid TOML, or nesting deeper than :data:`MAX_DEPTH`; one line naming ``source`` and the
        line or key.
    """
    deep = _bracket_depth(text)
    if deep is not None:
        line, _, key = deep
        where = f" (`{key}`)" if key else ""
        raise error(f"{source}, line {line}{where}: arrays or tables nested deeper than {MAX_DEPTH} levels")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{source} is not valid TOML: {exc}") from None
    except (RecursionError, MemoryError):
        raise error(f"{source}: arrays or tables nested deeper than {MAX_DEPTH} levels") from None
    path = too_deep(data, MAX_DEPTH)
    if path is not None:
        raise error(f"{source}: `{path[:120]}` is nested deeper than {MAX_DEPTH} levels")
    return data
