"""Frameworks: named model specs (score structure × outcome link × constraints × priors)."""

from bayesrank.errors import ModelSpecError
from bayesrank.frameworks.base import Framework, Priors
from bayesrank.frameworks.paired import BradleyTerry, Davidson, RaoKupper

#: framework name (CLI ``--model``) → class
FRAMEWORKS: dict[str, type[Framework]] = {
    cls.name: cls for cls in (BradleyTerry, RaoKupper, Davidson)
}


def framework_from_spec(spec: dict) -> Framework:
    """Rebuild a framework from :meth:`Framework.spec` output."""
    spec = dict(spec)
    name = spec.pop("framework")
    if name not in FRAMEWORKS:
        raise ModelSpecError(f"unknown framework {name!r}; known: {', '.join(FRAMEWORKS)}.")
    priors = Priors(**spec.pop("priors", {}))
    return FRAMEWORKS[name](**spec, priors=priors)


__all__ = ["FRAMEWORKS", "BradleyTerry", "Davidson", "Framework", "Priors", "RaoKupper", "framework_from_spec"]
