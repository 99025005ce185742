"""Benchmark: the structure check ("Do I need this term?") as the Identifiability page runs it, against the
full-refit approach it replaced, timed in the same run, with the recommendations of both.

The page runs ``structure_check(fit_records, fit.model, options, validation=..., base_fit=fit)`` on the
active run: every variant (a term removed or a candidate added) is fitted by output error from the run's
estimate with an evaluation limit and the integration of its start; an added coefficient that stays at its
bound (the cost rises as it leaves 0) is decided at the base estimate without fitting; close calls
(|ΔBIC| < REFINE_BIC) are fitted again with full settings and, for a removed term, from scratch.

The full-refit approach identified the base model again and every variant twice, from scratch
(equation error, segmented start, output error) and by output error from the base estimate, each
with the estimator's full settings (integration refined where needed, 200 evaluations), keeping the
lower cost. It is reproduced here with the same scoring (BIC on all samples, validation RMSE).

Data: the seed example (m0,m1,c1,c2,k1,k3 on its 12 s chirp; validation on the 7 N example) and,
when available, Silverbox (m0,c1,k1,k2,k3 as the Home page sets it up, output error on rows
40650:105712, validation on 105712:127400; ``NLID_SHARED_DATA`` or ``../shared/data``).
Printed: seconds of each approach, their ratio, every recommendation side by side and whether the
decisions (keep/drop, add/do not add) agree.

Run: ``python bench/bench_studies.py [--data seed|silverbox|both] [--skip-full]`` (the full refit
takes several minutes on Silverbox).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nlid_core.estimate import FitOptions, FitResult, identify  # noqa: E402
from nlid_core.examples import make_example  # noqa: E402
from nlid_core.io import load_record  # noqa: E402
from nlid_core.models import TermModel  # noqa: E402
from nlid_core.record import Record  # noqa: E402
from nlid_core.simulate import warm_up  # noqa: E402
from nlid_core.analysis import StructureCheck, structure_check, structure_variants  # noqa: E402
from nlid_core.analysis.structure import _recommendation, _usable, _variant  # noqa: E402

SILVERBOX_FS = 1e7 / 2**14


def silverbox_path() -> Path | None:
    base = Path(os.environ.get("NLID_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
    path = base / "silverbox" / "SNLS80mV.csv"
    return path if path.is_file() else None


def full_refit_structure_check(recs: list[Record], model: TermModel, opts: FitOptions,
                               validation: Record | None) -> StructureCheck:
    """The approach the page used before: base identified again, every variant fitted twice with full settings."""
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    base_fit = identify(recs, model, options=opts)
    base = _variant("base", "base", "", base_fit, recs, validation, usable=_usable(base_fit), start="identified",
                    seconds=0.0)
    variants, lines = [], []
    for label, change, term, mdl in structure_variants(model):
        fresh = identify(recs, mdl, options=opts)
        start = mdl.default_parameters({n: v for n, v in base_fit.values.items() if n in mdl.param_names},
                                       force_unit=fu, x_unit=xu)
        nested = identify(recs, mdl, params=start, options=dataclasses.replace(opts, method="output-error"))
        ok = [f for f in (fresh, nested) if f.success and math.isfinite(f.cost)]
        fit: FitResult = min(ok, key=lambda f: f.cost) if ok else fresh
        v = _variant(label, change, term, fit, recs, validation, usable=bool(ok), start="", seconds=0.0)
        if v.success:
            v = dataclasses.replace(v, delta_aic=v.aic - base.aic, delta_bic=v.bic - base.bic)
        variants.append(v)
        lines.append(_recommendation(v, base, validation is not None))
    return StructureCheck(success=base.success, message="full refit", base=base, variants=tuple(variants),
                          recommendations=tuple(lines))


def decision(line: str) -> str:
    return line.split(":", 1)[0]


def bench(name: str, recs: list[Record], terms: str, validation: Record, skip_full: bool) -> bool:
    print(f"\n== {name}: {terms}, {sum(r.n for r in recs)} estimation samples, validation on {validation.name}")
    fit = identify(recs, terms)
    print(f"the run's fit: {fit.timing['total_s']:.2f} s, {fit.nfev} evaluations, cost {fit.cost:.6g}")
    t0 = time.perf_counter()
    sc = structure_check(recs, fit.model, fit.options, validation=validation, base_fit=fit)
    t_new = time.perf_counter() - t0
    print(f"structure check as the page runs it: {t_new:.1f} s")
    for v in sc.variants:
        print(f"  {v.label:14s} {v.seconds:6.1f} s  ΔBIC {v.delta_bic:11.4g}  validation RMSE {v.validation_rmse:.4g}"
              f"  ({v.start})")
    print(f"  base validation RMSE {sc.base.validation_rmse:.4g}")
    if skip_full:
        for line in sc.recommendations:
            print(f"  - {line}")
        return True
    t0 = time.perf_counter()
    old = full_refit_structure_check(recs, fit.model, fit.options, validation)
    t_old = time.perf_counter() - t0
    print(f"full refit of every variant: {t_old:.1f} s  ->  {t_old / t_new:.1f} x faster")
    same = True
    for new_line, old_line in zip(sc.recommendations, old.recommendations, strict=True):
        agree = decision(new_line) == decision(old_line)
        same &= agree
        print(f"  {'same' if agree else 'DIFFERENT'}: now  {new_line}\n        before {old_line}")
    print(f"recommendations {'identical in every decision' if same else 'DIFFER'}")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=("seed", "silverbox", "both"), default="both")
    parser.add_argument("--skip-full", action="store_true", help="time only the structure check as the page runs it")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    warm_up()
    print(f"compiling the kernels: {time.perf_counter() - t0:.1f} s (not counted)")
    ok = True
    if args.data in ("seed", "both"):
        ok &= bench("seed example", [make_example("seed")], "m0,m1,c1,c2,k1,k3",
                    make_example("seed", overrides={"amplitude_n": 7.0, "seed": 3}), args.skip_full)
    if args.data in ("silverbox", "both"):
        path = silverbox_path()
        if path is None:
            print("\nSilverbox data not found (set NLID_SHARED_DATA): skipped")
        else:
            common = {"columns": "f=V1,x=V2", "units": "f=V,x=V", "fs": SILVERBOX_FS}
            train = load_record(path, rows="40650:105712", name="silverbox-train", **common)  # type: ignore[arg-type]
            test = load_record(path, rows="105712:127400", name="silverbox-test", **common)  # type: ignore[arg-type]
            ok &= bench("Silverbox", [train], "m0,c1,k1,k2,k3", test, args.skip_full)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
