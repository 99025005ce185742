"""Compile the numba kernels into the cache before the tests (or a first user) need them.

Runs the CLI commands that reach every kernel family on small problems, in two processes at once:
the single-DOF fast kernels and the general layer (RK4, SDIRK4, the term programs), and the multi-DOF
and flexible-pendulum kernels. Each kernel is then compiled once on this machine and loaded from
``NUMBA_CACHE_DIR`` by every later process, instead of being compiled by each test worker and each
command a test starts. Nothing is written outside a temporary folder and that cache.

Run: ``python scripts/warm_kernels.py`` (about a minute on a fresh machine, a few seconds once warm).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GROUPS = {
    "single-DOF": [
        ["example", "seed", "--out", "seed.csv"],
        ["identify", "seed.csv", "--quiet"],
        ["identify", "seed.csv", "--method", "equation-error", "--quiet"],
        ["example", "friction", "--out", "friction.csv"],
        ["simulate", "friction.csv", "--terms", "m0,k1,lugre",
         "--params", "m0=1,k1=400,sigma0=1e6,sigma1=300,Fc=1.5,Fs=2,vs=0.01", "--out", "lugre.csv"],
        ["simulate", "seed.csv", "--terms", "m0,c1,k1,bouc_wen", "--params", "m0=2,c1=0.5,k1=800",
         "--initial-state", "x=0.001,z=0", "--method", "sdirk", "--out", "bw.csv"],
        ["simulate", "seed.csv", "--terms", "m0,c1,k1,bouc_wen", "--params", "m0=2,c1=0.5,k1=800",
         "--method", "rk4", "--out", "bw4.csv"],
        ["simulate", "seed.csv", "--terms", "m0,c1,k1", "--custom", "asym=ka*x*abs(x)",
         "--params", "m0=2,c1=0.5,k1=800,ka=1e4", "--out", "asym.csv"],
    ],
    "multi-DOF and pendulum": [
        ["experiments", "--preset", "chain", "--out", "chain"],
        ["pendulum", "simulate", "--theta1", "0.785398", "--theta2", "0.523599", "--out", "traj.csv"],
        ["pendulum", "simulate", "--theta1", "0.785398", "--theta2", "0.523599", "--rigid", "--out", "rigid.csv"],
    ],
}


def _surrogate_and_energy() -> None:
    """Kernels no short command reaches: surrogate bounds over a box, the pendulum's elastic energy."""
    import numpy as np

    from nlid_core.multibody import pendulum
    from nlid_core.multibody.surrogate import build_surrogate

    s = build_surrogate(lambda x: np.array([x[0] * x[1], np.sin(x[0])]), [0.0, 0.0], [1.0, 1.0], order=2)
    s.bounds([0.0, 0.0], [0.5, 1.0])
    spec = pendulum.PendulumSpec()
    lay = pendulum.layout(spec)
    q = np.full(np.shape(lay.q_g), 0.01)
    pendulum.energy(spec, q, np.zeros_like(q), lay)


EXTRAS = {"multi-DOF and pendulum": _surrogate_and_energy}


def run_group(name: str) -> int:
    """Run one group's commands in this process (one import of the package for all of them)."""
    sys.path.insert(0, str(ROOT))
    from nlid_core.cli import main

    t0 = time.perf_counter()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="nlid-warm-") as tmp:
        os.chdir(tmp)
        for args in GROUPS[name]:
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                try:
                    code = main(args)
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 1
            if code not in (0, 4):  # 4: the fit ran and its verdict is "untrustworthy" (the kernels ran all the same)
                failed += 1
                print(f"warm-up: `{' '.join(args)}` exited {code}: {out.getvalue().strip()[-300:]}", file=sys.stderr)
        if name in EXTRAS:
            try:
                EXTRAS[name]()
            except Exception as exc:  # noqa: BLE001 - a warm-up failure only costs time later
                failed += 1
                print(f"warm-up: {EXTRAS[name].__name__}: {exc}", file=sys.stderr)
        os.chdir(ROOT)
    print(f"kernels compiled: {name} ({time.perf_counter() - t0:.0f} s)")
    return failed


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--group":
        return 1 if run_group(sys.argv[2]) else 0
    procs = [subprocess.Popen([sys.executable, __file__, "--group", name]) for name in GROUPS]
    for p in procs:
        p.wait()
    # a failed warm-up only costs time later (each test compiles what it needs), so it never fails the run
    return 0


if __name__ == "__main__":
    sys.exit(main())
