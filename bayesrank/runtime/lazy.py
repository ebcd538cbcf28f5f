"""Third-party modules imported on first use, so light entry points stay light.

``import bayesrank``, ``bayesrank --help`` and ``bayesrank datasets`` must not pay for the
PyMC stack (about a second of imports) or ArviZ (about two): the modules that define the
frameworks and samplers bind those libraries with :func:`lazy_module` at module level, and
the import happens the first time an attribute is read (building a model, sampling).

Only third-party libraries are bound this way; bayesrank's own modules import each other
normally, so the layering stays visible to tools that read the imports.
"""

from __future__ import annotations

import importlib
import sys
import types


class _LazyModule(types.ModuleType):
    """A stand-in that imports the named module on first attribute access and then takes
    over its namespace (later lookups are plain attribute reads)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.__dict__["_lazy_target"] = name

    def __getattr__(self, attr):
        module = importlib.import_module(self.__dict__["_lazy_target"])
        self.__dict__.update(module.__dict__)
        return getattr(module, attr)

    def __dir__(self):
        return dir(importlib.import_module(self.__dict__["_lazy_target"]))


def lazy_module(name: str) -> types.ModuleType:
    """The module ``name``: itself when already imported, else a stand-in that imports it on
    first attribute access.

    Parameters
    ----------
    name : str
        Dotted module name, e.g. ``"pymc"`` or ``"pytensor.tensor"``.
    """
    module = sys.modules.get(name)
    return module if module is not None else _LazyModule(name)


def is_imported(name: str) -> bool:
    """Whether ``name`` has really been imported in this process (not just bound lazily)."""
    return name in sys.modules


__all__ = ["is_imported", "lazy_module"]
