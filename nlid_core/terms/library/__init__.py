"""The term library: one module per term, each defining ``TERM`` (a :class:`~nlid_core.terms.base.TermDef`).

Adding a term is one module here plus its line in :mod:`nlid_core.terms.registry`.
"""
