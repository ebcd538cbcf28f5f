"""Sphinx configuration of the bayesrank documentation (``make docs``).

The site is built from the project's own files only: the MyST pages beside this file, the
docstrings of every name in ``bayesrank.__all__`` (autosummary), the committed notebooks with their
outputs (rendered, never executed here) and the benchmark tables of ``bench/results/`` (included,
so they have one source).
"""

import shutil
from pathlib import Path

import bayesrank

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

project = "bayesrank"
author = "the bayesrank developers"
copyright = "the bayesrank developers, BSD-3-Clause"
release = version = bayesrank.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx.ext.mathjax",
    "sphinx_copybutton",
]

# The notebooks are committed with their outputs (`make notebooks` executes them): the gallery shows
# those outputs and the build never runs a notebook. They are copied in at build time, not kept twice
# in git (docs/gallery/ is ignored).
GALLERY = DOCS / "gallery"
GALLERY.mkdir(exist_ok=True)
for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
    target = GALLERY / notebook.name
    if not target.exists() or target.read_bytes() != notebook.read_bytes():
        shutil.copyfile(notebook, target)

nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]

# API reference: one generated page per public name (docs/api/generated/ is ignored by git).
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
autodoc_default_options = {"undoc-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
templates_path = ["_templates"]
# The classes whose methods are the API (what a fit answers, what data hold). A framework is a
# specification: its options are its parameters, and its methods serve the engine.
autosummary_context = {"with_members": ["Fit", "Comparisons"]}

nitpicky = True
# Types named in signatures and docstrings that belong to other projects: the site does not fetch
# their inventories (the build reads nothing from the network).
# The site documents the top-level names (``bayesrank.<name>``); a docstring's reference into an
# internal module (``bayesrank.results.elo.elo``) renders as text, because those modules are
# being regrouped and are not pages of their own.
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|pandas|pd|xarray|xr|arviz|az|pymc|pm|pytensor|scipy|matplotlib)\..*"),
    (r"py:.*", r"bayesrank\.[a-z_]+\..*"),
]

html_theme = "pydata_sphinx_theme"
html_title = f"bayesrank {version}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": [],
}
# The colour mode the theme starts in (left unset, its script logs a console error on a first visit).
html_context = {"default_mode": "auto"}
html_static_path = []
html_show_sourcelink = False
