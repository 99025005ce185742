"""The closed-loop panels: on the Validate page the active run's model simulated inside a position loop (a drive
axis as it ran on the rig), driven by a reference record, against the validation record's position and force;
on the Identify page the model fitted inside that loop (``identify --closed-loop``).

The reference is a record of its own: the same file loaded again on the Data page with its reference column
mapped as the displacement (``x=qg``), as ``simulate --closed-loop --reference qg`` reads it on the command line.
"""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from nlid_core import figures
from nlid_core.closed_loop import LOOP_KEYS, LoopCheck, check_in_loop, identify_in_loop, parse_loop
from nlid_core.errors import NlidError
from nlid_core.estimate import FitResult
from nlid_core.record import Record

from . import jobs, state
from .session_types import ModelConfig
from .text import esc

NO_PULSES = "none"
EXAMPLE = "kp=160.18,kv=243.45,gain=35.15,limit=10,delay=1"


def _partners(recs: dict[str, Record], name: str) -> list[str]:
    """Records sampled at the same times as ``name``: the ones that can be its reference or its pulses."""
    rec = recs[name]
    return [n for n, r in recs.items() if n != name and r.n == rec.n and abs(float(r.t[0] - rec.t[0])) < 1e-9
            and abs(float(r.t[-1] - rec.t[-1])) <= 1e-6 * max(abs(float(rec.t[-1])), 1.0)]


def _loop_inputs(recs: dict[str, Record], name: str, spec_key: str,
                 ref_key: str) -> tuple[str, str, list[str], st.delta_generator.DeltaGenerator] | None:
    """The controller field and the reference choice for record ``name``: (controller text, reference, the
    records that could be its partners, the right-hand column); None, after saying what to load, when no record
    could be its reference."""
    partners = _partners(recs, name)
    if not partners:
        st.info(f"To use the position loop, load the file of {esc(name)} again on the Data page with its position"
                " reference as the displacement (e.g. columns `x=qg`), with the same units. It then appears here"
                " as the reference.")
        return None
    c1, c2 = st.columns(2)
    spec = c1.text_input(
        "Controller", key=spec_key, placeholder=EXAMPLE,
        help="KEY=VALUE pairs, as `simulate --closed-loop`: " + "; ".join(f"{k}: {v}" for k, v in LOOP_KEYS.items())
             + f". The EMPS axis: {EXAMPLE} (force in N); its benchmark's script runs the controller on the clock"
               " period=0.000999983961121758 (one time-stamp difference, t(10) − t(9)): add it to reproduce the"
               " published errors.")
    ref = c2.selectbox("Position reference", partners, key=ref_key,
                       help="A record whose displacement is the loop's reference, sampled as this one.")
    return spec, ref, partners, c2


def _same_unit(rec: Record, other: Record, channel: str, what: str) -> None:
    if other.unit(channel) != rec.unit(channel):
        raise NlidError(f"{what} {other.name} is in {other.unit(channel)} and {rec.name} in {rec.unit(channel)}:"
                        " load both with the same units")


def identify_panel(cfg: ModelConfig, recs: dict[str, Record]) -> None:
    """The Identify page's expander: output error inside the loop, from the equation-error estimate (from the
    configured values when the method is output error), on the one record to fit; a run like any other."""
    with st.expander("Fit inside the position loop (a drive axis under position control)"):
        if len(cfg.fit_records) != 1 or cfg.fit_records[0] not in recs:
            st.info("The loop fit takes one record: choose one record to fit on the Model page.")
            return
        name = cfg.fit_records[0]
        inputs = _loop_inputs(recs, name, state.IDENTIFY_LOOP_SPEC, state.IDENTIFY_LOOP_REFERENCE)
        if inputs is None:
            return
        spec, ref, _, _ = inputs
        st.caption(f"Fits {esc(name)}'s displacement and force, each relative to its size, with the model inside the"
                   " loop driven by the reference; starts from the equation-error estimate (from the Model page's"
                   " values when the method is output error). Each evaluation is one closed-loop simulation, so this"
                   " takes a while on a long record.")
        if st.button("Fit in the loop", key=state.IDENTIFY_LOOP_RUN, disabled=not spec.strip()):
            rec, reference = recs[name], recs[ref]
            start = time.perf_counter()
            try:
                loop = parse_loop(spec)
                _same_unit(rec, reference, "x", "the reference")
                result = jobs.run("closed-loop fit", identify_in_loop, (rec, cfg.model, cfg.params, reference.x, loop,
                                  cfg.options), key=state.IDENTIFY_LOOP_JOB, progress_arg="progress")
            except (NlidError, jobs.JobError) as exc:
                st.error(f"The closed-loop fit could not run: {esc(exc)}. Earlier results are kept.")
            else:
                run = state.add_run(cfg, result, time.perf_counter() - start)
                if not result.success:
                    st.error(f"Run #{run.id} failed: {esc(result.message)}. Earlier results are kept.")


def frame(check: LoopCheck) -> pd.DataFrame:
    """The simulation as a table, each column named with its unit."""
    run, u = check.run, check.units
    cols = {f"t [{u['t']}]": run.t, f"reference [{u['x']}]": run.reference, f"x simulated [{u['x']}]": run.x,
            f"f applied [{u['f']}]": run.force, "controller output": run.command}
    cols.update({f"{c} measured [{u[c]}]": v for c, v in check.measured.items()})
    return pd.DataFrame(cols)


def panel(run_id: int, fit: FitResult, recs: dict[str, Record], name: str) -> None:
    """The expander on the Validate page (see the module notes)."""
    with st.expander("Inside the position loop (a drive axis under position control)",
                     expanded=bool(state.loop_checks_of(run_id, name))):
        inputs = _loop_inputs(recs, name, state.VALIDATE_LOOP_SPEC, state.VALIDATE_LOOP_REFERENCE)
        if inputs is None:
            return
        spec, ref, partners, c2 = inputs
        pulses = c2.selectbox("Additive force", [NO_PULSES] + [p for p in partners if p != ref],
                              key=state.VALIDATE_LOOP_PULSES,
                              help="A record whose force is added to the controller's (the pulses of a validation"
                                   " record), in this record's force unit.")
        rec, reference = recs[name], recs[ref]
        if st.button("Simulate in the loop", key=state.VALIDATE_LOOP_RUN, disabled=not spec.strip()):
            try:
                loop = parse_loop(spec)
                _same_unit(rec, reference, "x", "the reference")
                extra = None if pulses == NO_PULSES else recs[pulses]
                if extra is not None:
                    _same_unit(rec, extra, "f", "the additive force of")
                check = jobs.run("closed-loop simulation", check_in_loop, (fit.model, fit.parameters, rec, reference.x,
                                 loop), {"pulses": None if extra is None else extra.f}, key=state.VALIDATE_LOOP_JOB,
                                 progress_arg="progress")
            except (NlidError, jobs.JobError) as exc:
                st.error(f"The closed-loop simulation could not run: {esc(exc)}. Earlier results are kept.")
            else:
                state.add_loop_check((run_id, name, ref, pulses, spec.strip()), check)
        shown = state.loop_checks_of(run_id, name)
        if not shown:
            return
        key, check = shown[-1]
        if not check.run.success:
            st.error(f"Inside the loop: {esc(check.run.message)}")
        names = {"x": "position", "f": "force"}
        st.markdown("**Relative errors** from sample {} (the EMPS benchmark's metric, the applied force against the"
                    " measured one): {}; the controller output saturated at {:.1f} % of the samples.".format(
                        check.start, ", ".join(f"{names[c]} **{e:.4g} %**" for c, e in check.errors.items()),
                        100 * check.run.saturated))
        st.caption(f"Reference {esc(key[2])}, additive force {esc(key[3])}, controller {esc(key[4], 200)}.")
        st.plotly_chart(figures.fig_closed_loop(check.run.t, check.run.reference, check.measured,
                                                {"x": check.run.x, "f": check.run.force}, units=check.units,
                                                name=name), key="val_loop_fig")
        st.download_button("Closed-loop simulation (CSV)", frame(check).to_csv(index=False).encode(),
                           file_name=f"{name}-closed-loop.csv", mime="text/csv", key=state.VALIDATE_LOOP_DOWNLOAD)
