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


#: Callbacks waiting for a module's import: name → [callable(module)] (:func:`after_import`).
_WAITING: dict[str, list] = {}


def after_import(name: str, callback) -> None:
    """Call ``callback(module)`` once the module ``name`` is imported — now, when it already is.

    An extension of a library's registry (a PyTensor backend's implementations of bayesrank's own
    operations) is registered when that library part is first imported, by whoever imports it,
    without importing it earlier: the numba backend costs 0.9 s of imports, which a fit that stays
    on the cheap tier never pays.

    Parameters
    ----------
    name : str
        Dotted module name.
    callback : callable
        Called with the module, after its code has run.
    """
    if is_imported(name):
        callback(sys.modules[name])
        return
    _WAITING.setdefault(name, []).append(callback)
    if not any(isinstance(finder, _AfterImportFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterImportFinder())


class _AfterImportFinder:
    """A meta-path finder that finds nothing itself: for a waited-for module it wraps the spec the
    other finders return so that the waiting callbacks run after the module's code."""

    def find_spec(self, name, path, target=None):
        if name not in _WAITING:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _ThenCall(spec.loader, name)
                return spec
        return None


class _ThenCall:
    """A module loader that runs the callbacks waiting for the module after loading it (every other
    attribute is the wrapped loader's)."""

    def __init__(self, loader, name: str):
        self._loader, self._name = loader, name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        for callback in _WAITING.pop(self._name, []):
            callback(module)

    def __getattr__(self, attr):
        return getattr(self._loader, attr)
