"""The model options of the command line (``--custom``, ``--start``, ``--fix``, ``--bounds``, ``--free``); the text they
take is read by :mod:`nlid_core.modeltext`."""

from __future__ import annotations

import argparse

__all__ = ["add_model_options"]


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--custom``, ``--start``, ``--fix``, ``--bounds`` and ``--free`` to ``identify``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The ``identify`` parser.
    """
    parser.add_argument("--custom", action="append", default=[], metavar="NAME=EXPR",
                        help="a term typed as its force in x, v, a and parameter names, e.g. asym=ka*x*abs(x)"
                             " (repeatable; added to --terms when not listed there; parsed, never evaluated)")
    parser.add_argument("--start", metavar="NAME=VALUE,...",
                        help="start values, e.g. k1=1500,k3=-2e5 (inside the bounds; two-stage replaces those of"
                             " the parameters the equation error solves for)")
    parser.add_argument("--fix", metavar="NAME=VALUE,...",
                        help="hold these parameters at these values (inside their default bounds; nothing else"
                             " changes)")
    parser.add_argument("--bounds", metavar="NAME=LO:HI,...",
                        help="bounds, e.g. k1=0:,m0=0.5:2 (an empty side is infinite; the start value is clipped"
                             " into them)")
    parser.add_argument("--free", metavar="NAME,...",
                        help="estimate parameters that are held fixed by default (settings such as v_eps and gap,"
                             " see the `terms` command), e.g. --free v_eps --bounds v_eps=1e-4:1e-1")
