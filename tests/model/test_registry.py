"""Frameworks by name: every registered framework, with options other than its defaults and its own
priors, is rebuilt equal from its spec (saved fits) and from its text form (the CLI's ``--model``);
wrong names, options and values are refused naming them."""

import dataclasses

import pytest

import bayesrank as br
from bayesrank.model.registry import FRAMEWORKS, framework_from_spec

#: text form → the framework it means, one for every registered name, options away from the defaults
TEXTS = {
    "bt:ties=drop,k_cov=2": br.BradleyTerry(ties="drop", k_cov=2),
    "rao-kupper:k_tie=2,tie-intercept=yes,threshold=abs": br.RaoKupper(k_tie=2, tie_intercept=True, threshold="abs"),
    "davidson:k_tie=1,k_cov=0": br.Davidson(k_tie=1, k_cov=0),
    "judge-aware:position_bias=true": br.JudgeAware(position_bias=True),
    "btl:ties=drop": br.BTL(ties="drop"),
    "judge-aware-signed:position_bias=1": br.SignedJudgeAware(position_bias=True),
    "judge-aware-covariate:covariate=len": br.JudgeAwareCovariate(covariate="len"),
    "hja:rank=2": br.HJA(rank=2),
    "by-category:ties=drop": br.ByCategory(ties="drop"),
    "dynamic:base=davidson,spike=0.2": br.Dynamic(base=br.Davidson(), spike=0.2),
    "random-effects:base=davidson,cluster=user,spread=none": br.RandomEffects(base=br.Davidson(), cluster="user",
                                                                              spread=None),
}


def test_every_registered_framework_has_a_case():
    assert {text.partition(":")[0] for text in TEXTS} == set(FRAMEWORKS)


@pytest.mark.parametrize("text", sorted(TEXTS))
def test_text_and_spec_rebuild_the_framework(text):
    framework = TEXTS[text]
    assert framework_from_spec(text) == framework
    assert framework_from_spec(framework.spec()) == framework
    own = dataclasses.replace(framework, priors=dataclasses.replace(framework.priors, score=1.25))
    again = framework_from_spec(own.spec())
    assert again == own and again.priors.score == 1.25 and again != framework


@pytest.mark.parametrize(("text", "message"), [
    ("elo", r"unknown model 'elo' in 'elo'; known: bt, rao-kupper, davidson"),
    ("davidson:k_ties=1", r"'k_ties=1' in 'davidson:k_ties=1' is not an option=value of davidson "
                          r"\(its options: k_cov, k_tie, tie_intercept\)"),
    ("davidson:k_tie", r"'k_tie' in 'davidson:k_tie' is not an option=value"),
    ("davidson:k_tie=one", r"'k_tie=one': expected a whole number"),
    ("davidson:tie_intercept=maybe", r"'tie_intercept=maybe': expected true or false"),
    ("dynamic:spike=lots", r"'spike=lots': expected a number"),
    ("davidson:k_tie=1,k_tie=0", r"'davidson:k_tie=1,k_tie=0' sets k_tie twice; give each option once"),
    ("bt:ties=drop,ties=half", r"sets ties twice"),
])
def test_wrong_text_is_refused_naming_the_part(text, message):
    with pytest.raises(br.ModelSpecError, match=message):
        framework_from_spec(text)


def test_wrong_specs_are_refused():
    with pytest.raises(br.ModelSpecError, match=r"unknown framework 'elo'; known: bt"):
        framework_from_spec({"framework": "elo"})
    with pytest.raises(br.ModelSpecError, match="invalid options for davidson"):
        framework_from_spec({"framework": "davidson", "k_ties": 1})
    for spec, message in (({"framework": "bt", "priors": "x"}, "the priors of a bt spec are a dict"),
                          ({"framework": "bt", "priors": {"scores": 1.0}}, "invalid priors for bt"),
                          (3, "a framework spec is a dict")):
        with pytest.raises(br.ModelSpecError, match=message):
            framework_from_spec(spec)


def test_the_text_form_is_a_spec_too():
    assert framework_from_spec("davidson:k_tie=1") == br.Davidson(k_tie=1)
