"""The frameworks by name (CLI ``--model`` and saved fits) and their reconstruction from a spec."""

from __future__ import annotations

from bayesrank.errors import ModelSpecError
from bayesrank.model.categories import ByCategory
from bayesrank.model.dynamic import Dynamic
from bayesrank.model.framework import Framework
from bayesrank.model.hja import HJA
from bayesrank.model.judge_aware import BTL, JudgeAware, JudgeAwareCovariate, SignedJudgeAware
from bayesrank.model.paired import BradleyTerry, Davidson, RaoKupper
from bayesrank.model.random_effects import RandomEffects

#: framework name (CLI ``--model``) → class
FRAMEWORKS: dict[str, type[Framework]] = {
    cls.name: cls
    for cls in (BradleyTerry, RaoKupper, Davidson, JudgeAware, BTL, SignedJudgeAware, JudgeAwareCovariate, HJA,
                ByCategory, Dynamic, RandomEffects)
}


def framework_from_spec(spec: dict) -> Framework:
    """Rebuild a framework from :meth:`bayesrank.model.framework.Framework.spec` output.

    Raises
    ------
    ModelSpecError
        Unknown framework name or options.
    """
    spec = dict(spec)
    name = spec.pop("framework", None)
    if name not in FRAMEWORKS:
        raise ModelSpecError(f"unknown framework {name!r}; known: {', '.join(FRAMEWORKS)}.")
    cls = FRAMEWORKS[name]
    if isinstance(spec.get("base"), dict):  # a framework built on another (random effects): its spec nested
        spec["base"] = framework_from_spec(spec["base"])
    # each framework may have its own priors dataclass (JudgeAware: JudgePriors)
    priors = cls.__dataclass_fields__["priors"].default_factory(**spec.pop("priors", {}))
    # an option that is itself a framework (the base of a Dynamic) is saved as its spec
    spec = {k: framework_from_spec(v) if isinstance(v, dict) and "framework" in v else v for k, v in spec.items()}
    try:
        return cls(**spec, priors=priors)
    except TypeError as err:
        raise ModelSpecError(f"invalid options for {name}: {err}.") from None
