"""The time structure: its options, its coordinates (grid) and the change probability's formula."""

import numpy as np
import pytest
from scipy.stats import norm

import bayesrank as br
from bayesrank.model.dynamic import change_probability, grid_of
from bayesrank.model.registry import framework_from_spec


def test_spec_round_trips_with_its_base():
    framework = br.Dynamic(br.Davidson(), spike=0.2)
    again = framework_from_spec(framework.spec())
    assert again == framework and again.label == framework.label
    assert again.link == "davidson" and again.priors.slab == 0.5


@pytest.mark.parametrize("base,words", [(br.Davidson(k_tie=1), "k_tie"), (br.BradleyTerry(k_cov=0), "k_cov"),
                                        (br.JudgeAware(), "takes one of")])
def test_unsupported_bases_are_refused_in_words(base, words):
    with pytest.raises(br.ModelSpecError, match=words):
        br.Dynamic(base)


def test_spike_must_be_a_fraction():
    with pytest.raises(br.ModelSpecError, match=r"spike must be a number in \(0, 1\)"):
        br.Dynamic(br.BradleyTerry(), spike=1.5)


def test_data_without_periods_are_refused_with_the_fix(arena):
    with pytest.raises(br.DataError, match="time_column="):
        br.Dynamic(br.BradleyTerry()).prepare(arena)


def test_grid_of_items_entering_leaving_and_pausing():
    # item 0: periods 0-3; item 1: 1 and 3 (a pause at 2); item 2: 0 only
    active = np.array([[1, 1, 1, 1], [0, 1, 0, 1], [1, 0, 0, 0]], dtype=bool)
    grid = grid_of(active)
    # slots run period by period, items in order within a period
    expected_slot = np.array([[0, 2, 4, 5], [-1, 3, -1, 6], [1, -1, -1, -1]])
    np.testing.assert_array_equal(grid.slot, expected_slot)
    # carried: before the first period with battles its first slot, after it the last one
    np.testing.assert_array_equal(grid.carry, [[0, 2, 4, 5], [3, 3, 3, 6], [1, 1, 1, 1]])
    # jumps between consecutive periods with battles, dated to the later one
    assert sorted(zip(grid.jump_item.tolist(), grid.jump_period.tolist(), grid.jump_from.tolist(),
                      grid.jump_to.tolist())) == [(0, 1, 0, 2), (0, 2, 2, 4), (0, 3, 4, 5), (1, 3, 3, 6)]
    np.testing.assert_array_equal(grid.first, [0, 1, 0])
    np.testing.assert_array_equal(grid.last, [3, 3, 0])


@pytest.mark.parametrize("jump", [0.0, 0.05, 0.3, -1.2])
def test_change_probability_is_the_slab_share_of_the_mixture(jump):
    slab, rate, spike = 0.4, 0.05, 0.1
    slab_density = rate * norm.pdf(jump, 0, slab)
    spike_density = (1 - rate) * norm.pdf(jump, 0, spike * slab)
    assert change_probability(jump, slab, rate, spike) == pytest.approx(slab_density / (slab_density + spike_density))
