"""The frameworks by name (CLI ``--model`` and saved fits) and their reconstruction from a spec:
a dict (saved fits) or its text form (the CLI), both by :func:`framework_from_spec`."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping

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


def framework_from_spec(spec: Mapping | str) -> Framework:
    """Rebuild a framework from :meth:`bayesrank.model.framework.Framework.spec` output, or from
    the text form the CLI's ``--model`` takes (``"davidson:k_tie=1"``: ``name[:option=value,...]``,
    options the framework's fields, values parsed by their type).

    Raises
    ------
    ModelSpecError
        A spec that is neither, an unknown framework name, options or priors.
    """
    if isinstance(spec, str):
        return _from_text(spec)
    if not isinstance(spec, Mapping):
        raise ModelSpecError(f"a framework spec is a dict such as {{'framework': 'davidson', 'k_tie': 1}} or its "
                             f"text form 'davidson:k_tie=1', got {spec!r}.")
    spec = dict(spec)
    name = spec.pop("framework", None)
    if name not in FRAMEWORKS:
        raise ModelSpecError(f"unknown framework {name!r}; known: {', '.join(FRAMEWORKS)}.")
    cls = FRAMEWORKS[name]
    if isinstance(spec.get("base"), dict):  # a framework built on another (random effects): its spec nested
        spec["base"] = framework_from_spec(spec["base"])
    # each framework may have its own priors dataclass (JudgeAware: JudgePriors)
    priors = spec.pop("priors", {})
    if not isinstance(priors, Mapping):
        raise ModelSpecError(f"the priors of a {name} spec are a dict of prior scales, got {priors!r}.")
    try:
        priors = cls.__dataclass_fields__["priors"].default_factory(**priors)
    except TypeError as err:
        raise ModelSpecError(f"invalid priors for {name}: {err}.") from None
    # an option that is itself a framework (the base of a Dynamic) is saved as its spec
    spec = {k: framework_from_spec(v) if isinstance(v, dict) and "framework" in v else v for k, v in spec.items()}
    try:
        return cls(**spec, priors=priors)
    except TypeError as err:
        raise ModelSpecError(f"invalid options for {name}: {err}.") from None


def _from_text(text: str) -> Framework:
    """A framework from ``name[:option=value,...]``, the text form of a spec the CLI takes
    (``davidson:k_tie=1,tie_intercept=true``; ``random-effects:base=davidson``): options are the
    framework's fields, values parsed by their type.

    Raises
    ------
    ModelSpecError
        An unknown framework, an option it does not have or sets twice, or a value of the wrong
        kind (named).
    """
    name, _, rest = text.partition(":")
    if name not in FRAMEWORKS:
        raise ModelSpecError(f"unknown model {name!r} in {text!r}; known: {', '.join(FRAMEWORKS)}.")
    cls = FRAMEWORKS[name]
    hints = typing.get_type_hints(cls)
    own = {f.name for f in dataclasses.fields(cls)} - {"priors"}
    options = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or key not in own:
            raise ModelSpecError(f"{item!r} in {text!r} is not an option=value of {name} "
                                 f"(its options: {', '.join(sorted(own)) or 'none'}).")
        if key in options:
            raise ModelSpecError(f"{text!r} sets {key} twice; give each option once.")
        options[key] = _parse_value(value.strip(), hints[key], item)
    return cls(**options)


def _parse_value(text: str, hint, item: str):
    """``text`` as the type ``hint`` of a framework's field says (``item`` names it in errors)."""
    if text.lower() in ("none", "null") and type(None) in typing.get_args(hint):
        return None
    if isinstance(hint, type) and issubclass(hint, Framework):   # the base of random effects
        return _from_text(text)
    if hint is bool:
        if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise ModelSpecError(f"{item!r}: expected true or false.")
        return text.lower() in ("true", "1", "yes")
    if hint is int or int in typing.get_args(hint):
        try:
            return int(text)
        except ValueError:
            raise ModelSpecError(f"{item!r}: expected a whole number.") from None
    if hint is float or float in typing.get_args(hint):
        try:
            return float(text)
        except ValueError:
            raise ModelSpecError(f"{item!r}: expected a number.") from None
    return text


__all__ = ["FRAMEWORKS", "framework_from_spec"]
