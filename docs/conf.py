"""Sphinx configuration of PCP's documentation: the README's guides and an API reference
generated from the docstrings of the installed package. Build: python -m sphinx -W -b html docs DIR"""
project = "PCP"
author = "PCP's developers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser"]  # napoleon: Args/Returns/Raises sections
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
autodoc_docstring_signature = True  # pybind11 puts a function's signature on its docstring's first line
autodoc_member_order = "bysource"
# A Returns section reads "what: details" ("A dict: name, api, ..."): keep it one sentence
# rather than splitting "what" off into a separate "Return type" field.
napoleon_use_rtype = False
html_theme = "alabaster"
html_title = "PCP — Planetary Compute Protocol"
myst_heading_anchors = 3
