"""Reading and writing measurement records.

Tables are read from CSV/TXT/TSV (delimiter sniffed), Parquet, Excel and
MATLAB ``.mat`` files, their columns are mapped to the channels ``t, f, x, v,
a`` of a :class:`~nlid_core.record.Record`, scaled to SI units and validated.

Every problem with the input raises
:class:`~nlid_core.errors.DataValidationError` whose message names the file,
the column (in backticks), the 0-based data row where one applies and what was
received; exceptions of pandas, pyarrow, scipy, zipfile or the XML parser
never leak out of :func:`read_table`, :func:`load_record` or
:func:`load_records`, and every message is one printable line (a library's
own text is cut to 200 characters).

Files are untrusted (uploads to a shared server). Each reader checks what the
file *declares* against :class:`~nlid_core.limits.Limits` before allocating
it, and refuses with a message naming the limit and its environment
variable:

* every format: size on disk (``max_file_mb``); rows, columns and cells of
  the table (``max_rows``, ``max_columns``, ``max_cells``);
* CSV/TXT/TSV: delimiter, decimal mark, header and field counts are sniffed
  from the first 64 kB (1 MB for long lines) and pandas reads the file from
  disk, at most ``max_rows`` (and ``max_cells / columns``) rows plus one to
  detect more. Rows with more fields than the header are never shifted: one
  more field counting 0, 1, 2, ... is a row index, dropped with a note;
  anything else is an error naming the row;
* ``.xlsx``: the zip directory, each part's declared size and compression
  ratio (``max_uncompressed_mb``, ``max_ratio``) and compression method; the
  sheet's ``<dimension>``; then the first sheet is streamed, each row and
  cell checked as it arrives, the bytes actually inflated counted, and
  nothing allocated for the size a sheet declares;
* ``.mat``: every variable header is walked first (class, dimensions; a
  compressed variable is inflated, counted and discarded no further than its
  header, the ratio and the decompressed-size limits allow); only real
  numeric variables are then loaded by scipy;
* Parquet: the footer's declared columns, rows and row groups
  (``max_row_groups``) are skimmed before pyarrow decodes it; then each
  column chunk's declared sizes and every page header (decompressed size,
  ratio, value count) are checked before any page is read.

A column named like a row index (empty, ``Unnamed: 0``, ``index``) that
counts 0, 1, 2, ... is never mapped to a channel by name.

Specs as given on a command line::

    parse_columns_spec("t=time,f=force,x=disp")  # channel -> file column
    parse_units_spec("x=mm,f=kN")                # channel -> unit
    parse_scale_spec("f=35.15N")                 # channel -> factor to SI (a drive gain: volts to newtons)

A unit is a name from :data:`UNIT_FACTORS` for the channel's quantity, or a
plain positive number (the factor to SI). A name the table does not know for
that quantity (e.g. ``V`` for an electrical analogue) is kept as the
channel's unit string with factor 1; a name belonging to another quantity
(e.g. ``x=kN``) is an error. A column header ending in a bracketed known unit
(or ``V``, ``mV``), such as ``x [mm]`` or ``Force (kN)``, supplies the unit of
its channel when none is given explicitly.

The package is organised by job; every name above is importable from
``nlid_core.io`` itself:

* :mod:`~nlid_core.io.readers`: the reader registry by extension and :func:`read_table`;
* :mod:`~nlid_core.io.text`, :mod:`~nlid_core.io.parquet`, :mod:`~nlid_core.io.xlsx`
  (with :mod:`~nlid_core.io._zipxml`), :mod:`~nlid_core.io.mat`: one reader each;
* :mod:`~nlid_core.io.columns`: column specs and mapping; :mod:`~nlid_core.io.units`: units to SI;
* :mod:`~nlid_core.io.load`: :func:`load_record`, :func:`load_records`;
  :mod:`~nlid_core.io.write`: :func:`write_record`.
"""

from __future__ import annotations

from .columns import parse_columns_spec, parse_scale_spec, parse_units_spec
from .load import load_record, load_records
from .readers import SUPPORTED_EXTENSIONS, read_table
from .units import CHANNEL_QUANTITY, UNIT_FACTORS, unit_factor
from .write import write_record

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "UNIT_FACTORS",
    "CHANNEL_QUANTITY",
    "read_table",
    "parse_columns_spec",
    "parse_scale_spec",
    "parse_units_spec",
    "unit_factor",
    "load_record",
    "load_records",
    "write_record",
]
