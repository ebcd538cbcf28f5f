"""Frameworks: named model specs (score structure × outcome link × constraints × priors)."""

from bayesrank.errors import ModelSpecError
from bayesrank.frameworks.base import Framework, Priors
from bayesrank.frameworks.judge_aware import BTL, JudgeAware, JudgePriors
from bayesrank.frameworks.judge_covariate import JudgeAwareCovariate
from bayesrank.frameworks.paired import BradleyTerry, Davidson, RaoKupper

#: framework name (CLI ``--model``) → class
FRAMEWORKS: dict[str, type[Framework]] = {
    cls.name: cls for cls in (BradleyTerry, RaoKupper, Davidson, JudgeAware, BTL, JudgeAwareCovariate)
}


def framework_from_spec(spec: dict) -> Framework:
    """Rebuild a framework from :meth:`Framework.spec` output."""
    spec = dict(spec)
    name = spec.pop("framework")
    if name not in FRAMEWORKS:
        raise ModelSpecError(f"unknown framework {name!r}; known: {', '.join(FRAMEWORKS)}.")
    cls = FRAMEWORKS[name]
    # each framework may have its own priors dataclass (JudgeAware: JudgePriors)
    priors = cls.__dataclass_fields__["priors"].default_factory(**spec.pop("priors", {}))
    return cls(**spec, priors=priors)


__all__ = [
    "BTL",
    "FRAMEWORKS",
    "BradleyTerry",
    "Davidson",
    "Framework",
    "JudgeAware",
    "JudgeAwareCovariate",
    "JudgePriors",
    "Priors",
    "RaoKupper",
    "framework_from_spec",
]
