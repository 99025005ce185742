"""What the CLI's commands share: the loading options of ``identify``, given to another command as they are."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

__all__ = ["share_options"]


def share_options(parser: argparse.ArgumentParser, source: argparse.ArgumentParser, names: Iterable[str]) -> None:
    """Add ``source``'s options whose destinations are in ``names`` to ``parser``, as they are (one
    definition of each flag, its help and its type, for every command that loads records)."""
    wanted = set(names)
    for action in source._actions:
        if action.dest in wanted:
            parser._add_action(action)
