"""The GARS tie-weight schemes (Frauen et al., App. C.1): what each outcome category credits to the
first and second item and which categories the normaliser counts."""

import pytest

import bayesrank as br
from bayesrank.model.scoring import SCHEMES, SCORES, Scheme, scheme_of

#: (credit to the first item, credit to the second, counted) of win_first, win_second, tie[, both_bad]
DOCUMENTED = {
    "binary": [(1, 0, 1), (0, 1, 1), (0, 0, 0)],
    "win-loss-tie": [(1, 0, 1), (0, 1, 1), (0.5, 0.5, 1)],
    "win-loss-both-good-both-bad": [(1, 0, 1), (0, 1, 1), (1, 1, 1), (0, 0, 1)],
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_each_scheme_credits_the_outcomes_as_documented(name):
    scheme = scheme_of(name)
    assert scheme.name == name and scheme.n_categories == len(DOCUMENTED[name])
    assert list(zip(scheme.w1, scheme.w2, scheme.norm)) == DOCUMENTED[name]


def test_credits_of_a_category_are_symmetric_between_the_two_items():
    for scheme in SCHEMES.values():
        assert scheme.w1[0] == scheme.w2[1] and scheme.w1[1] == scheme.w2[0]
        assert all(a == b for a, b in zip(scheme.w1[2:], scheme.w2[2:]))


def test_a_scheme_passes_through_and_an_unknown_name_lists_the_choices():
    own = Scheme("mine", (1, 0, 0.25), (0, 1, 0.25), (1, 1, 1))
    assert scheme_of(own) is own
    with pytest.raises(br.BayesrankError, match="unknown tie weights 'wlt'; use one of binary, win-loss-tie, "
                                                "win-loss-both-good-both-bad"):
        scheme_of("wlt")
    assert SCORES == ("borda", "bt", "rank-centrality")
