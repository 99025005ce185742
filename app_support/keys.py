"""The keys under which the dashboard keeps things in Streamlit's session state: every widget's key (Streamlit
keeps a widget's value under it, and a job's Cancel button under ``<job key>_cancel``) and the session's own
entries. Charts, tables and containers need no entry: Streamlit keeps no state for them. The pages read them
as ``state.KEY`` (:mod:`app_support.state` re-exports them).
"""

from __future__ import annotations

from typing import Final

__all__ = ["RECORDS", "CONFIG", "RUNS", "ACTIVE_RUN", "VALIDATIONS", "NOTICE", "LINEAR_FIT", "REPORT_HTML",
           "STUDIES", "DESIGNS", "MONTE_CARLO", "TEACHING", "OPEN_STUDY", "SAVED_RUNS", "ROLES", "LINEAGE",
           "MAX_STUDIES", "MAX_DESIGNS", "HOME_LOAD_EXAMPLE", "HOME_LOAD_SILVERBOX", "DATA_UPLOAD", "DATA_COLUMNS",
           "DATA_UNITS", "DATA_FS", "DATA_ROWS", "DATA_LOAD_UPLOAD", "DATA_RECORD", "DATA_TRIM_RANGE",
           "DATA_APPLY_TRIM", "DATA_LOWPASS_HZ", "DATA_APPLY_FILTER", "DATA_DIFF_METHOD", "DATA_APPLY_DERIVE",
           "DATA_REMOVE_RECORD", "DATA_FORM", "PAGE_MESSAGES", "EDITOR_TABLES", "CHOICES", "DATA_RESAMPLE",
           "DATA_UPLOAD_PANEL",
           "FRIC_STICK_PANEL", "DATA_SPLIT_BY", "DATA_SPLIT_TABLE", "DATA_SPLIT", "DATA_RENAME_TO", "DATA_RENAME",
           "NL_RECORD", "NL_EVIDENCE_JOB", "NL_LOOP_COLOR", "NL_HARMONICS_AGAINST", "NL_TONE1", "NL_TONE2",
           "NL_FRF_RECORDS", "NL_FIT_LINEAR", "NL_BLA_MANUAL", "NL_BLA_PERIOD", "NL_BLA_TRANSIENT",
           "NL_BLA_SEGMENTS", "NL_BLA_CUT", "NL_BLA_DOWNLOAD", "NL_TABS", "NL_USE_MODEL", "NL_LINEAR_JOB",
           "MODEL_FIT_RECORDS", "MODEL_TERMS", "MODEL_METHOD", "MODEL_OUTPUTS", "MODEL_INPUT_HOLD",
           "MODEL_INITIAL_STATE", "MODEL_FORCE_THRESHOLD", "MODEL_CUSTOM", "MODEL_AUTO_GUESS", "IDENTIFY_RUN",
           "IDENTIFY_JOB", "IDENTIFY_LOOP_SPEC", "IDENTIFY_LOOP_REFERENCE", "IDENTIFY_LOOP_RUN",
           "IDENTIFY_LOOP_JOB", "IDENTIFY_ACTIVE_RUN", "IDENTIFY_COMPARE_RUNS", "IDENTIFY_SAVE_LABEL",
           "IDENTIFY_SAVE_RUN", "IDENTIFY_NEW_STUDY", "IDENTIFY_CREATE_STUDY", "AUTH_SIGN_IN", "AUTH_SIGN_OUT",
           "STUDIES_PICK", "STUDIES_OPEN", "STUDIES_CLOSE", "STUDIES_NEW_NAME", "STUDIES_NEW_WITH_RUN",
           "STUDIES_CREATE", "STUDIES_SAVE_RECORDS", "STUDIES_NOTES", "STUDIES_SAVE_NOTES", "STUDIES_RENAME_TO",
           "STUDIES_RENAME", "STUDIES_DUPLICATE_TO", "STUDIES_DUPLICATE", "STUDIES_SHARE_WITH", "STUDIES_SHARE",
           "STUDIES_UNSHARE_WHO", "STUDIES_UNSHARE", "STUDIES_DELETE_CONFIRM", "STUDIES_DELETE",
           "STUDIES_COMPARE_PARAM", "STUDIES_EXPORT", "STUDIES_IMPORT_FILE", "STUDIES_IMPORT_NAME", "STUDIES_IMPORT",
           "STUDIES_COMPARE_RUNS", "STUDIES_BATCH_PARAM", "STUDIES_BATCH_CSV", "STUDIES_BATCH_SPEC",
           "STUDIES_BATCH_UPLOAD", "STUDIES_BATCH_STUDY", "STUDIES_BATCH_RESTART", "STUDIES_BATCH_RUN",
           "STUDIES_BATCH_JOB", "STUDIES_BATCH_RESUME", "STUDIES_BATCH_RESUME_JOB", "VALIDATE_RECORD",
           "VALIDATE_N_INIT", "VALIDATE_CHANNEL", "VALIDATE_INIT", "VALIDATE_LOOP_SPEC", "VALIDATE_LOOP_REFERENCE",
           "VALIDATE_LOOP_PULSES", "VALIDATE_LOOP_RUN", "VALIDATE_LOOP_JOB", "VALIDATE_LOOP_DOWNLOAD", "LOOP_CHECKS", "IDENT_SENSITIVITY_JOB", "IDENT_PROFILE_PARAM",
           "IDENT_PROFILE_POINTS", "IDENT_RUN_PROFILE", "IDENT_PROFILE_JOB", "IDENT_N_STARTS",
           "IDENT_RUN_MULTISTART", "IDENT_MULTISTART_JOB", "IDENT_LAMBDA_RANGE", "IDENT_RUN_REGULARISATION",
           "IDENT_REGULARISATION_JOB", "IDENT_STRUCTURE_VALIDATION", "IDENT_RUN_STRUCTURE", "IDENT_STRUCTURE_JOB",
           "IDENT_TABS", "DESIGN_KIND", "DESIGN_F0", "DESIGN_F1", "DESIGN_AMPLITUDE", "DESIGN_DURATION", "DESIGN_FS",
           "DESIGN_STEPS", "DESIGN_DOWNLOAD", "DESIGN_ADD_DESIGN", "DESIGN_PRIOR_SOURCE", "DESIGN_PRIOR_TERMS",
           "DESIGN_NOISE_SD", "DESIGN_CLEAR_DESIGNS", "DESIGN_SUGGEST", "DESIGN_SUGGEST_JOB", "DESIGN_MC_RUNS",
           "DESIGN_RUN_MC", "DESIGN_MC_JOB", "DESIGN_PREDICT_JOB", "DESIGN_KEPT", "EXPORT_PARAMS_CSV", "EXPORT_JSON",
           "EXPORT_VALIDATION_CSV", "EXPORT_BUILD_REPORT", "EXPORT_REPORT", "TEACH_SYSTEM", "TEACH_AMPLITUDE",
           "TEACH_BAND", "TEACH_DURATION", "TEACH_MEASURE", "TEACH_TEST_JOB", "TEACH_CHECK_JOB", "TEACH_LINEAR_JOB",
           "TEACH_EVIDENCE_JOB", "TEACH_TERMS", "TEACH_IDENTIFY", "TEACH_FIT_JOB", "TEACH_REVEAL", "TEACH_FORM",
           "MODEL_PARAMS", "MODEL_WEIGHT", "IDENT_PRIOR", "DESIGN_PRIOR_VALUES", "FRICTION", "FRICTION_SOURCE",
           "FRICTION_MASS", "FRICTION_FC", "FRICTION_FS", "FRICTION_VS", "FRICTION_SIGMA0", "FRICTION_SIGMA1",
           "FRICTION_SIGMA2", "FRICTION_NOISE", "FRICTION_SEED", "FRICTION_DWELL", "FRICTION_PRE_DURATION",
           "FRICTION_SIMULATE", "FRICTION_SIMULATE_JOB", "FRICTION_UPLOAD_STEADY", "FRICTION_UPLOAD_PRE",
           "FRICTION_LOAD_UPLOADS", "FRICTION_PICK_STEADY", "FRICTION_PICK_PRE", "FRICTION_USE_LOADED",
           "FRICTION_FIX_MASS", "FRICTION_KNOWN_MASS", "FRICTION_POLISH", "FRICTION_IDENTIFY",
           "FRICTION_IDENTIFY_JOB", "FRICTION_STICK_SLIP", "FRICTION_STICK_SLIP_JOB", "FRICTION_BW_SOURCE",
           "FRICTION_BW_RECORD", "FRICTION_BW_SEED", "FRICTION_BW_IDENTIFY", "FRICTION_BW_JOB", "FRICTION_DL_JSON",
           "FRICTION_DL_PLATEAUS", "FRICTION_DL_BW", "TEACH_FRICTION_EXPERIMENT", "TEACH_FRICTION_RUN",
           "TEACH_FRICTION_JOB", "MDOF", "MDOF_FORM", "MDOF_TABS", "MDOF_SOURCE", "MDOF_CHAIN_N", "MDOF_CHAIN_TERMS",
           "MDOF_CHAIN_FIXED_END", "MDOF_CHAIN_DRIVEN", "MDOF_PLATFORM_IDENTICAL", "MDOF_UPLOAD", "MDOF_DL_MODEL",
           "MDOF_RECORDS_FROM", "MDOF_LEVEL", "MDOF_NOISE", "MDOF_FS", "MDOF_DURATION", "MDOF_SEED",
           "MDOF_START_ERROR", "MDOF_SIMULATE", "MDOF_SIMULATE_JOB", "MDOF_MAP_KIND", "MDOF_MAP_HELD",
           "MDOF_MAP_USE", "MDOF_MAP", "MDOF_SHOW_RECORD", "MDOF_FRF_RECORDS", "MDOF_DL_RECORD", "MDOF_PLAN_EDITOR",
           "MDOF_PLAN_RESET", "MDOF_PLAN_UPLOAD", "MDOF_PLAN_LOAD", "MDOF_DL_PLAN", "MDOF_RUN_NEXT", "MDOF_RUN_ALL",
           "MDOF_RESTART", "MDOF_STAGE_JOB", "MDOF_ONE_SHOT", "MDOF_ONE_SHOT_JOB", "MDOF_VALIDATE_RECORD",
           "MDOF_FRF_OUTPUT", "MDOF_VALIDATE_JOB", "MDOF_DL_ESTIMATES", "MDOF_DL_FINAL_MODEL", "MDOF_DL_FINAL_PLAN",
           "MDOF_DL_REPORT_JSON", "MDOF_DL_REPORT_TEXT",
           "MULTIBODY", "MULTIBODY_FORM", "MB_TABS", "MB_LENGTH_OA", "MB_LENGTH_AB", "MB_HEIGHT", "MB_WIDTH",
           "MB_DENSITY", "MB_E_OA", "MB_E_AB", "MB_NU", "MB_N_OA", "MB_N_AB", "MB_DT", "MB_RHO_INF", "MB_PRESET",
           "MB_THETA1", "MB_THETA2", "MB_T_END", "MB_DT_OUT", "MB_SIMULATE", "MB_SIMULATE_JOB",
           "MB_ANIMATION_LAYOUT", "MB_EXAGGERATE", "MB_DL_SIMULATED", "MB_TRAJ_SOURCE", "MB_TRAJ_UPLOAD", "MB_FREE",
           "MB_METHOD", "MB_IDENTIFY", "MB_IDENTIFY_JOB", "MB_DL_FIT", "MB_MID", "MB_RADIUS", "MB_USE_E_AB",
           "MB_ORDER", "MB_KIND", "MB_N_CHECK", "MB_FORWARD", "MB_FORWARD_JOB", "MB_DL_BOUNDS", "MB_FWD_RELATIVE",
           "MB_INV_RELATIVE", "MB_BOUNDS_SOURCE", "MB_BOUNDS_UPLOAD", "MB_INV_FREE", "MB_INV_FIXED", "MB_INV_ORDER",
           "MB_INV_KIND", "MB_POPULATION", "MB_ITERATIONS", "MB_SEED", "MB_INVERSE", "MB_INVERSE_JOB",
           "MB_DL_INVERSE"]


# the session's own entries
RECORDS = "nlid_records"  # dict[str, Record], in load order
CONFIG = "nlid_model_config"  # ModelConfig
RUNS = "nlid_runs"  # list[Run]
ACTIVE_RUN = "nlid_active_run"  # int run id
VALIDATIONS = "nlid_validations"  # dict[(run id, record name, n_init), ValidationResult]
LOOP_CHECKS = "nlid_loop_checks"  # dict[(run id, record, reference, pulses, controller), LoopCheck] of Validate
NOTICE = "nlid_notice"  # (kind, text, markdown) shown once on the next page render
LINEAR_FIT = "nlid_linear_fit"  # (record content key, FitResult) of the Nonlinearity page's linear model
REPORT_HTML = "nlid_report_html"  # (run id, html) of the last report built on the Export page
STUDIES = "nlid_studies"  # dict[(run id, study, settings...), result] of the Identifiability page
DESIGNS = "nlid_designs"  # list[(label, Excitation)] compared on the Excitation design page
MONTE_CARLO = "nlid_mc"  # the last Monte Carlo check of the Excitation design page
TEACHING = "nlid_teaching"  # dict of the Teaching mode's demo (records, fits, choices)
OPEN_STUDY = "nlid_open_study"  # StudyRef: the saved study open in this session (Studies page), or absent
SAVED_RUNS = "nlid_saved_runs"  # dict[(saved study id, session run id), (stored run id, label)]
ROLES = "nlid_roles"  # dict[record name, "fit" | "test"]: the role a split (or a benchmark) gave a record
LINEAGE = "nlid_lineage"  # dict[record name, (origin, first row, stop row)] of records cut from another
#: Studies kept per session (oldest dropped first; studies of runs no longer kept are dropped too).
MAX_STUDIES = 12
#: Candidate designs kept for comparison per session.
MAX_DESIGNS = 8

# --------------------------------------------------------------------------- widget keys
# Streamlit keeps a widget's value in session_state under its key (and a job's Cancel button under
# ``<job key>_cancel``). Charts, tables and containers need no entry: Streamlit keeps no state for them.
# Home
HOME_LOAD_EXAMPLE: Final = "load_example"
HOME_LOAD_SILVERBOX: Final = "load_silverbox"
# Data
DATA_UPLOAD: Final = "upload"
DATA_COLUMNS: Final = "columns"
DATA_UNITS: Final = "units"
DATA_FS: Final = "fs"
DATA_ROWS: Final = "rows"
DATA_LOAD_UPLOAD: Final = "load_upload"
DATA_RECORD: Final = "data_record"
DATA_TRIM_RANGE: Final = "trim_range"
DATA_APPLY_TRIM: Final = "apply_trim"
DATA_LOWPASS_HZ: Final = "lowpass_hz"
DATA_APPLY_FILTER: Final = "apply_filter"
DATA_DIFF_METHOD: Final = "diff_method"
DATA_APPLY_DERIVE: Final = "apply_derive"
DATA_REMOVE_RECORD: Final = "remove_record"
DATA_FORM: Final = "nlid_data_form"  # not a widget: the Data page's kept form values (see restore_form)
PAGE_MESSAGES: Final = "nlid_page_messages"  # not a widget: messages queued by callbacks, by page section
EDITOR_TABLES: Final = "nlid_editor_tables"  # not a widget: tables of data editors kept across visits
CHOICES: Final = "nlid_choices"  # not a widget: choices kept across page changes (see widgets.remembered_choice)
DATA_RESAMPLE: Final = "resample"
DATA_UPLOAD_PANEL: Final = "upload_panel"
FRIC_STICK_PANEL: Final = "fric_stick_panel"
DATA_SPLIT_BY: Final = "split_by"
DATA_SPLIT_TABLE: Final = "split_table"  # key_for(DATA_SPLIT_TABLE, record, by, version)
DATA_SPLIT: Final = "split_record"
DATA_RENAME_TO: Final = "rename_to"
DATA_RENAME: Final = "rename_record"
# Nonlinearity
NL_RECORD: Final = "nl_record"
NL_EVIDENCE_JOB: Final = "nl_evidence"
NL_LOOP_COLOR: Final = "loop_color"
NL_HARMONICS_AGAINST: Final = "harm_against"
NL_TONE1: Final = "tone1"
NL_TONE2: Final = "tone2"
NL_FRF_RECORDS: Final = "frf_records"
NL_FIT_LINEAR: Final = "fit_linear"
NL_BLA_MANUAL: Final = "nl_bla_manual"
NL_BLA_PERIOD: Final = "nl_bla_period"
NL_BLA_TRANSIENT: Final = "nl_bla_transient"
NL_BLA_SEGMENTS: Final = "nl_bla_segments"
NL_BLA_CUT: Final = "nl_bla_cut"
NL_BLA_DOWNLOAD: Final = "nl_bla_download"
NL_TABS: Final = "nl_tabs"
NL_USE_MODEL: Final = "nl_use_model"
NL_LINEAR_JOB: Final = "nl_linear_job"
# Model
MODEL_FIT_RECORDS: Final = "fit_records"
MODEL_TERMS: Final = "terms"
MODEL_METHOD: Final = "method"
MODEL_OUTPUTS: Final = "outputs"
MODEL_INPUT_HOLD: Final = "input_hold"
MODEL_INITIAL_STATE: Final = "initial_state"
MODEL_FORCE_THRESHOLD: Final = "force_threshold"
MODEL_CUSTOM: Final = "custom_terms"
MODEL_AUTO_GUESS: Final = "auto_guess"
# Identify
IDENTIFY_RUN: Final = "run_identification"
IDENTIFY_JOB: Final = "identification"
IDENTIFY_LOOP_SPEC: Final = "ident_loop_spec"
IDENTIFY_LOOP_REFERENCE: Final = "ident_loop_reference"
IDENTIFY_LOOP_RUN: Final = "ident_loop_run"
IDENTIFY_LOOP_JOB: Final = "ident_loop_job"
IDENTIFY_ACTIVE_RUN: Final = "active_run_select"
IDENTIFY_COMPARE_RUNS: Final = "compare_runs"
IDENTIFY_SAVE_LABEL: Final = "save_run_label"  # key_for(IDENTIFY_SAVE_LABEL, run id)
IDENTIFY_SAVE_RUN: Final = "save_run"
IDENTIFY_NEW_STUDY: Final = "save_run_new_study"  # key_for(IDENTIFY_NEW_STUDY, run id): name of a study to create
IDENTIFY_CREATE_STUDY: Final = "save_run_create_study"
# Studies (saved studies in the database) and sign-in
AUTH_SIGN_IN: Final = "auth_sign_in"
AUTH_SIGN_OUT: Final = "auth_sign_out"
STUDIES_PICK: Final = "studies_pick"
STUDIES_OPEN: Final = "studies_open"
STUDIES_CLOSE: Final = "studies_close"
STUDIES_NEW_NAME: Final = "studies_new_name"
STUDIES_NEW_WITH_RUN: Final = "studies_new_with_run"
STUDIES_CREATE: Final = "studies_create"
STUDIES_SAVE_RECORDS: Final = "studies_save_records"
STUDIES_NOTES: Final = "studies_notes"  # key_for(STUDIES_NOTES, study id, updated)
STUDIES_SAVE_NOTES: Final = "studies_save_notes"
STUDIES_RENAME_TO: Final = "studies_rename_to"  # key_for(STUDIES_RENAME_TO, study id)
STUDIES_RENAME: Final = "studies_rename"
STUDIES_DUPLICATE_TO: Final = "studies_duplicate_to"  # key_for(STUDIES_DUPLICATE_TO, study id)
STUDIES_DUPLICATE: Final = "studies_duplicate"
STUDIES_SHARE_WITH: Final = "studies_share_with"
STUDIES_SHARE: Final = "studies_share"
STUDIES_UNSHARE_WHO: Final = "studies_unshare_who"
STUDIES_UNSHARE: Final = "studies_unshare"
STUDIES_DELETE_CONFIRM: Final = "studies_delete_confirm"  # key_for(STUDIES_DELETE_CONFIRM, study id)
STUDIES_DELETE: Final = "studies_delete"
STUDIES_COMPARE_PARAM: Final = "studies_compare_param"
STUDIES_EXPORT: Final = "studies_export"
STUDIES_IMPORT_FILE: Final = "studies_import_file"
STUDIES_IMPORT_NAME: Final = "studies_import_name"
STUDIES_IMPORT: Final = "studies_import"
STUDIES_COMPARE_RUNS: Final = "studies_compare_runs"  # key_for(STUDIES_COMPARE_RUNS, study id)
STUDIES_BATCH_PARAM: Final = "studies_batch_param"
STUDIES_BATCH_CSV: Final = "studies_batch_csv"
STUDIES_BATCH_SPEC: Final = "studies_batch_spec"  # the spec text of "Run a Monte Carlo batch"
STUDIES_BATCH_UPLOAD: Final = "studies_batch_upload"
STUDIES_BATCH_STUDY: Final = "studies_batch_study"
STUDIES_BATCH_RESTART: Final = "studies_batch_restart"
STUDIES_BATCH_RUN: Final = "studies_batch_run"
STUDIES_BATCH_JOB: Final = "studies_batch_job"  # the job's Cancel button is f"{...}_cancel"
STUDIES_BATCH_RESUME: Final = "studies_batch_resume"
STUDIES_BATCH_RESUME_JOB: Final = "studies_batch_resume_job"
# Validate
VALIDATE_RECORD: Final = "val_record"
VALIDATE_N_INIT: Final = "n_init"
VALIDATE_CHANNEL: Final = "val_channel"
VALIDATE_INIT: Final = "val_init"
VALIDATE_LOOP_SPEC: Final = "val_loop_spec"
VALIDATE_LOOP_REFERENCE: Final = "val_loop_reference"
VALIDATE_LOOP_PULSES: Final = "val_loop_pulses"
VALIDATE_LOOP_RUN: Final = "val_loop_run"
VALIDATE_LOOP_JOB: Final = "val_loop_job"
VALIDATE_LOOP_DOWNLOAD: Final = "val_loop_download"
# Identifiability
IDENT_SENSITIVITY_JOB: Final = "sensitivity"
IDENT_PROFILE_PARAM: Final = "profile_param"
IDENT_PROFILE_POINTS: Final = "profile_points"
IDENT_RUN_PROFILE: Final = "run_profile"
IDENT_PROFILE_JOB: Final = "profile"
IDENT_N_STARTS: Final = "n_starts"
IDENT_RUN_MULTISTART: Final = "run_multistart"
IDENT_MULTISTART_JOB: Final = "multistart"
IDENT_LAMBDA_RANGE: Final = "lambda_range"
IDENT_RUN_REGULARISATION: Final = "run_regularisation"
IDENT_REGULARISATION_JOB: Final = "regularisation"
IDENT_STRUCTURE_VALIDATION: Final = "struct_val"
IDENT_RUN_STRUCTURE: Final = "run_structure"
IDENT_STRUCTURE_JOB: Final = "structure"
IDENT_TABS: Final = "ident_tabs"
# Excitation design
DESIGN_KIND: Final = "exc_kind"
DESIGN_F0: Final = "exc_f0"
DESIGN_F1: Final = "exc_f1"
DESIGN_AMPLITUDE: Final = "exc_amp"
DESIGN_DURATION: Final = "exc_duration"
DESIGN_FS: Final = "exc_fs"
DESIGN_STEPS: Final = "exc_steps"
DESIGN_DOWNLOAD: Final = "dl_excitation"
DESIGN_ADD_DESIGN: Final = "add_design"
DESIGN_PRIOR_SOURCE: Final = "prior_source"
DESIGN_PRIOR_TERMS: Final = "prior_terms"
DESIGN_NOISE_SD: Final = "noise_sd"
DESIGN_CLEAR_DESIGNS: Final = "clear_designs"
DESIGN_SUGGEST: Final = "suggest_design"
DESIGN_SUGGEST_JOB: Final = "suggest"
DESIGN_MC_RUNS: Final = "mc_runs"
DESIGN_RUN_MC: Final = "run_mc"
DESIGN_MC_JOB: Final = "monte_carlo"
DESIGN_PREDICT_JOB: Final = "predict_designs"
DESIGN_KEPT: Final = "nlid_design_kept"  # not a widget: {"predictions": (inputs, list), "suggestion": (inputs, ...)}
# Export
EXPORT_PARAMS_CSV: Final = "dl_params_csv"
EXPORT_JSON: Final = "dl_json"
EXPORT_VALIDATION_CSV: Final = "dl_validation"
EXPORT_BUILD_REPORT: Final = "build_report"
EXPORT_REPORT: Final = "dl_report"
# Teaching mode
TEACH_SYSTEM: Final = "teach_system"
TEACH_AMPLITUDE: Final = "teach_amp"
TEACH_BAND: Final = "teach_band"
TEACH_DURATION: Final = "teach_duration"
TEACH_MEASURE: Final = "teach_measure"
TEACH_TEST_JOB: Final = "teach_test"
TEACH_CHECK_JOB: Final = "teach_check"
TEACH_LINEAR_JOB: Final = "teach_linear"
TEACH_EVIDENCE_JOB: Final = "teach_evidence"
TEACH_TERMS: Final = "teach_terms"
TEACH_IDENTIFY: Final = "teach_identify"
TEACH_FIT_JOB: Final = "teach_fit"
TEACH_REVEAL: Final = "teach_reveal"
TEACH_FORM: Final = "teach_form"
# Keys of widgets repeated per term set, channel or run: ``key_for(MODEL_PARAMS, *terms)``
MODEL_PARAMS: Final = "params"
MODEL_WEIGHT: Final = "weight"
IDENT_PRIOR: Final = "prior"
DESIGN_PRIOR_VALUES: Final = "prior_values"
# --------------------------------------------------------------------------- friction & hysteresis page
FRICTION: Final = "nlid_friction"  # dict: records (steady, presliding, truth), result, replay, stick-slip, Bouc-Wen
FRICTION_SOURCE: Final = "fric_source"
FRICTION_MASS: Final = "fric_mass"
FRICTION_FC: Final = "fric_fc"
FRICTION_FS: Final = "fric_fs"
FRICTION_VS: Final = "fric_vs"
FRICTION_SIGMA0: Final = "fric_sigma0"
FRICTION_SIGMA1: Final = "fric_sigma1"
FRICTION_SIGMA2: Final = "fric_sigma2"
FRICTION_NOISE: Final = "fric_noise"
FRICTION_SEED: Final = "fric_seed"
FRICTION_DWELL: Final = "fric_dwell"
FRICTION_PRE_DURATION: Final = "fric_pre_duration"
FRICTION_SIMULATE: Final = "fric_simulate"
FRICTION_SIMULATE_JOB: Final = "fric_sim_job"
FRICTION_UPLOAD_STEADY: Final = "fric_upload_steady"
FRICTION_UPLOAD_PRE: Final = "fric_upload_pre"
FRICTION_LOAD_UPLOADS: Final = "fric_load_uploads"
FRICTION_PICK_STEADY: Final = "fric_pick_steady"
FRICTION_PICK_PRE: Final = "fric_pick_pre"
FRICTION_USE_LOADED: Final = "fric_use_loaded"
FRICTION_FIX_MASS: Final = "fric_fix_mass"
FRICTION_KNOWN_MASS: Final = "fric_known_mass"
FRICTION_POLISH: Final = "fric_polish"
FRICTION_IDENTIFY: Final = "fric_identify"
FRICTION_IDENTIFY_JOB: Final = "fric_identify_job"
FRICTION_STICK_SLIP: Final = "fric_stick_slip"
FRICTION_STICK_SLIP_JOB: Final = "fric_stick_slip_job"
FRICTION_BW_SOURCE: Final = "fric_bw_source"
FRICTION_BW_RECORD: Final = "fric_bw_record"
FRICTION_BW_SEED: Final = "fric_bw_seed"
FRICTION_BW_IDENTIFY: Final = "fric_bw_identify"
FRICTION_BW_JOB: Final = "fric_bw_job"
FRICTION_DL_JSON: Final = "fric_dl_json"
FRICTION_DL_PLATEAUS: Final = "fric_dl_plateaus"
FRICTION_DL_BW: Final = "fric_dl_bw"
TEACH_FRICTION_EXPERIMENT: Final = "teach_fric_experiment"
TEACH_FRICTION_RUN: Final = "teach_fric_run"
TEACH_FRICTION_JOB: Final = "teach_fric_job"
# --------------------------------------------------------------------------- multi-DOF page
MDOF: Final = "nlid_mdof"  # dict: model, records, truth, start, plan, stage reports, one-shot, validations
MDOF_FORM: Final = "nlid_mdof_form"  # not a widget: the Multi-DOF page's kept form values (see restore_form)
MDOF_TABS: Final = "mdof_tabs"
MDOF_SOURCE: Final = "mdof_source"
MDOF_CHAIN_N: Final = "mdof_chain_n"
MDOF_CHAIN_TERMS: Final = "mdof_chain_terms"
MDOF_CHAIN_FIXED_END: Final = "mdof_chain_fixed_end"
MDOF_CHAIN_DRIVEN: Final = "mdof_chain_driven"
MDOF_PLATFORM_IDENTICAL: Final = "mdof_platform_identical"
MDOF_UPLOAD: Final = "mdof_upload"
MDOF_DL_MODEL: Final = "mdof_dl_model"
MDOF_RECORDS_FROM: Final = "mdof_records_from"
MDOF_LEVEL: Final = "mdof_level"
MDOF_NOISE: Final = "mdof_noise"
MDOF_FS: Final = "mdof_fs"
MDOF_DURATION: Final = "mdof_duration"
MDOF_SEED: Final = "mdof_seed"
MDOF_START_ERROR: Final = "mdof_start_error"
MDOF_SIMULATE: Final = "mdof_simulate"
MDOF_SIMULATE_JOB: Final = "mdof_simulate_job"
MDOF_MAP_KIND: Final = "mdof_map_kind"  # key_for(MDOF_MAP_KIND, record name)
MDOF_MAP_HELD: Final = "mdof_map_held"  # key_for(MDOF_MAP_HELD, record name)
MDOF_MAP_USE: Final = "mdof_map_use"  # key_for(MDOF_MAP_USE, record name)
MDOF_MAP: Final = "mdof_map"
MDOF_SHOW_RECORD: Final = "mdof_show_record"
MDOF_FRF_RECORDS: Final = "mdof_frf_records"
MDOF_DL_RECORD: Final = "mdof_dl_record"  # key_for(MDOF_DL_RECORD, record name)
MDOF_PLAN_EDITOR: Final = "mdof_plan_editor"  # key_for(MDOF_PLAN_EDITOR, plan version)
MDOF_PLAN_RESET: Final = "mdof_plan_reset"
MDOF_PLAN_UPLOAD: Final = "mdof_plan_upload"
MDOF_PLAN_LOAD: Final = "mdof_plan_load"
MDOF_DL_PLAN: Final = "mdof_dl_plan"
MDOF_RUN_NEXT: Final = "mdof_run_next"
MDOF_RUN_ALL: Final = "mdof_run_all"
MDOF_RESTART: Final = "mdof_restart"
MDOF_STAGE_JOB: Final = "mdof_stage_job"  # key_for(MDOF_STAGE_JOB, stage number)
MDOF_ONE_SHOT: Final = "mdof_one_shot"
MDOF_ONE_SHOT_JOB: Final = "mdof_one_shot_job"
MDOF_VALIDATE_RECORD: Final = "mdof_validate_record"
MDOF_FRF_OUTPUT: Final = "mdof_frf_output"
MDOF_VALIDATE_JOB: Final = "mdof_validate_job"
MDOF_DL_ESTIMATES: Final = "mdof_dl_estimates"
MDOF_DL_FINAL_MODEL: Final = "mdof_dl_final_model"
MDOF_DL_FINAL_PLAN: Final = "mdof_dl_final_plan"
MDOF_DL_REPORT_JSON: Final = "mdof_dl_report_json"
MDOF_DL_REPORT_TEXT: Final = "mdof_dl_report_text"
# --------------------------------------------------------------------------- multibody & interval page
MULTIBODY: Final = "nlid_multibody"  # dict: simulated runs, trajectory fit, forward analysis, interval inverse results
MULTIBODY_FORM: Final = "nlid_multibody_form"  # not a widget: the page's kept form values (see restore_form)
MB_TABS: Final = "mb_tabs"
MB_LENGTH_OA: Final = "mb_length_oa"
MB_LENGTH_AB: Final = "mb_length_ab"
MB_HEIGHT: Final = "mb_height"
MB_WIDTH: Final = "mb_width"
MB_DENSITY: Final = "mb_density"
MB_E_OA: Final = "mb_e_oa"
MB_E_AB: Final = "mb_e_ab"
MB_NU: Final = "mb_nu"
MB_N_OA: Final = "mb_n_oa"
MB_N_AB: Final = "mb_n_ab"
MB_DT: Final = "mb_dt"
MB_RHO_INF: Final = "mb_rho_inf"
MB_PRESET: Final = "mb_preset"
MB_THETA1: Final = "mb_theta1"
MB_THETA2: Final = "mb_theta2"
MB_T_END: Final = "mb_t_end"
MB_DT_OUT: Final = "mb_dt_out"
MB_SIMULATE: Final = "mb_simulate"
MB_SIMULATE_JOB: Final = "mb_simulate_job"
MB_ANIMATION_LAYOUT: Final = "mb_animation_layout"
MB_EXAGGERATE: Final = "mb_exaggerate"
MB_DL_SIMULATED: Final = "mb_dl_simulated"
MB_TRAJ_SOURCE: Final = "mb_traj_source"
MB_TRAJ_UPLOAD: Final = "mb_traj_upload"
MB_FREE: Final = "mb_free"
MB_METHOD: Final = "mb_method"
MB_IDENTIFY: Final = "mb_identify"
MB_IDENTIFY_JOB: Final = "mb_identify_job"
MB_DL_FIT: Final = "mb_dl_fit"
MB_MID: Final = "mb_mid"  # key_for(MB_MID, parameter): an interval's midpoint
MB_RADIUS: Final = "mb_radius"  # key_for(MB_RADIUS, parameter): an interval's radius
MB_USE_E_AB: Final = "mb_use_e_ab"
MB_ORDER: Final = "mb_order"
MB_KIND: Final = "mb_kind"
MB_N_CHECK: Final = "mb_n_check"
MB_FORWARD: Final = "mb_forward"
MB_FORWARD_JOB: Final = "mb_forward_job"
MB_DL_BOUNDS: Final = "mb_dl_bounds"
MB_FWD_RELATIVE: Final = "mb_fwd_relative"
MB_INV_RELATIVE: Final = "mb_inv_relative"
MB_BOUNDS_SOURCE: Final = "mb_bounds_source"
MB_BOUNDS_UPLOAD: Final = "mb_bounds_upload"
MB_INV_FREE: Final = "mb_inv_free"
MB_INV_FIXED: Final = "mb_inv_fixed"  # key_for(MB_INV_FIXED, parameter): a held value in the interval inverse
MB_INV_ORDER: Final = "mb_inv_order"
MB_INV_KIND: Final = "mb_inv_kind"
MB_POPULATION: Final = "mb_population"
MB_ITERATIONS: Final = "mb_iterations"
MB_SEED: Final = "mb_seed"
MB_INVERSE: Final = "mb_inverse"
MB_INVERSE_JOB: Final = "mb_inverse_job"
MB_DL_INVERSE: Final = "mb_dl_inverse"
