"""Fit.update: the saved cells plus new records, fitted as a batch fit of every record would be."""

import json

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.inference.map import fit_map
from tests.conftest import simulate_battles

SCORES = np.array([1.2, 0.8, 0.3, 0.0, -0.2, -0.7, -1.1, 0.5])
JUDGES = {"j1": 1.0, "j2": 0.6, "j3": 1.6, "j4": 1.2}


def logs(seed, **options):
    """An old log (models m0…m6) and new records in which m7 (and, for judges, j4) appear."""
    rng = np.random.default_rng(seed)
    judges = options.pop("judges", None)
    old = simulate_battles(SCORES, 3000, rng, models=range(7), judges=None if judges is None else
                           {k: v for k, v in judges.items() if k != "j4"}, **options)
    new = simulate_battles(SCORES, 600, rng, first_id=10**6, judges=judges, **options)
    return old, new


CASES = {
    "davidson-k1": (br.Davidson(k_tie=1), {}, {}),
    "bt-style": (br.BradleyTerry(), dict(beta=0.4), dict(contrasts=["len"])),
    "judge-aware": (br.JudgeAware(), dict(judges=JUDGES), {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_update_equals_a_batch_fit_of_every_record(case, tmp_path):
    framework, simulate, read = CASES[case]
    old, new = logs(7, **simulate)
    saved = br.fit(framework, br.load(old, **read))
    saved.save(tmp_path / "fit.nc")                      # the old log is not used again
    updated = br.Fit.load(tmp_path / "fit.nc").update(new)
    batch = br.fit(framework, br.load(pd.concat([old, new]), **read))
    assert updated.nll == pytest.approx(batch.nll, rel=1e-9)
    assert np.max(np.abs(updated.scores() - batch.scores())) < 1e-6
    a, b = updated.leaderboard(), batch.leaderboard()
    assert list(a["name"]) == list(b["name"])
    assert np.allclose(a[["se", "lower", "upper"]], b[["se", "lower", "upper"]], atol=1e-6)
    assert updated.converged and updated.data.n_records == len(old) + len(new)
    assert updated.diagnostics["update"]["new_models"] == ["m7"]


def test_lineage_records_every_set_of_records():
    old, new = logs(1)
    fit = br.fit(br.Davidson(), old)
    once = fit.update(new.iloc[:300])
    twice = once.update(new.iloc[300:])
    lineage = twice.lineage
    assert [e["records"] for e in lineage] == [3000, 300, 300]
    assert [e["ids"] for e in lineage] == [True, True, True]
    assert lineage[1]["new_models"] == ["m7"] and lineage[2]["new_models"] == []
    assert all("added" in e for e in lineage)
    assert twice.data.n_records == 3600 and twice.data.record_ids.size == 3600


def test_a_failed_update_leaves_the_fit_as_it_was():
    old, new = logs(2)
    fit = br.fit(br.Davidson(), old)
    before = (dict(fit.tree.attrs), fit.tree["data"].to_dataset().copy(deep=True))
    attempts = [lambda: fit.update(old.iloc[:10]),                                   # ids counted already
                lambda: fit.update(new, intervals="sandwich"),                       # other options
                lambda: fit.update(new, framework=br.Davidson(k_tie=1)),             # another model
                lambda: fit.update(new.assign(model_a="x", model_b="y")),            # another arena
                lambda: fit.update(new, contrasts=["len"])]                          # another reading
    for attempt in attempts:
        with pytest.raises(br.BayesrankError):
            attempt()
    assert dict(fit.tree.attrs) == before[0]
    assert fit.tree["data"].to_dataset().identical(before[1])


def test_errors_name_what_differs():
    old, new = logs(3)
    fit = br.fit(br.Davidson(), old)
    with pytest.raises(br.ModelSpecError, match=r"Fit.update\(\) got unknown option\(s\) 'tune'.*its options: "
                                                r"cluster, draws, information, intervals"):
        fit.update(new, tune=10)   # an option of NUTS fits
    with pytest.raises(br.ModelSpecError, match=r"intervals=None \(saved\) vs 'sandwich'"):
        fit.update(new, intervals="sandwich")
    with pytest.raises(br.ModelSpecError, match=r"k_tie=0 \(saved\) vs 1"):
        fit.update(new, framework=br.Davidson(k_tie=1))
    direct = br.Fit(fit_map(br.Davidson(), br.load(old)))
    with pytest.raises(br.FitFileError, match="does not record the options"):
        direct.update(new)


def test_a_nuts_update_starts_from_the_saved_posterior():
    old, new = logs(4)
    options = dict(method="nuts", draws=200, tune=200, chains=2, random_seed=3, sampler="pymc", progressbar=False)
    fit = br.fit(br.BradleyTerry(), old, **options)
    updated = fit.update(new[new["model_a"].ne("m7") & new["model_b"].ne("m7")])
    warm = updated.diagnostics["warm_start"]
    assert warm["tune"] == 100 and warm["initial_points"] == "the earlier chains' last draws"
    assert warm["mass_matrix"] == "the earlier draws' variance in the new whitened coordinates"
    for key in ("max_rhat", "min_ess_bulk", "divergences", "converged"):
        assert key in updated.diagnostics
    assert json.loads(updated.tree.attrs["bayesrank_options"])["tune"] == 200
    batch = br.fit(br.BradleyTerry(), pd.concat([old, new[new["model_a"].ne("m7") & new["model_b"].ne("m7")]]),
                   **options)
    gap = np.abs(updated.scores() - batch.scores()) / batch.leaderboard().set_index("name")["se"]
    assert gap.max() < 0.5                         # the same posterior, up to Monte-Carlo error


def test_new_records_follow_the_fits_both_bad_convention_and_duplicate_rule():
    """The new records are read with the saved fit's reading: a board read with the leaderbot
    paper's convention leaves the day's both-bad ties out (battle records would count them by
    default), and a board that counts a repeated record once counts the day's repeats once — as
    a batch fit of every record read alike does. Asking for another reading is refused."""
    old, new = logs(11)
    rng = np.random.default_rng(12)
    bothbad = rng.random(len(new)) < 0.1
    new.loc[bothbad, "winner"] = "tie (bothbad)"
    new = pd.concat([new, new.iloc[:40]], ignore_index=True)           # an export that ran twice
    read = dict(both_bad_as_ties=False, drop_duplicates=True)
    saved = br.fit(br.Davidson(), br.load(old, **read))
    updated = saved.update(new)
    batch = br.fit(br.Davidson(), br.load(pd.concat([old, new]), **read))
    assert updated.nll == pytest.approx(batch.nll, rel=1e-9)
    assert updated.data.n_comparisons == batch.data.n_comparisons == len(old) + len(new) - 40 - bothbad.sum()
    assert updated.data.reading["both_bad_as_ties"] is False and updated.data.reading["drop_duplicates"] is True
    for option in ({"both_bad_as_ties": True}, {"drop_duplicates": False}):
        with pytest.raises(br.DataError, match=f"{next(iter(option))}=.* where the fit was read with"):
            saved.update(new, **option)


def test_fits_with_clusters_or_periods_are_refitted_not_updated():
    """Merged cells keep neither the comparisons of each cell by cluster nor calendar periods, so
    an update of such a fit is refused in words (never a fit that silently lost them)."""
    from bayesrank.data.simulate import arena_over_time, clustered_battles

    rng = np.random.default_rng(5)
    votes = clustered_battles(np.array([-0.5, 0.0, 0.5]), 12, rng, pairs_per_cluster=2, votes_per_pair=5)
    clustered = br.fit(br.BradleyTerry(), br.load(votes, cluster="user"), intervals="sandwich", cluster="user")
    with pytest.raises(br.ModelSpecError, match="clusters of dependent comparisons"):
        clustered.update(votes.iloc[:10])
    arena = arena_over_time(4, 3, 200, rng)
    over_time = br.fit(br.Dynamic(br.BradleyTerry()), br.load(arena.records, time_column="date"))
    with pytest.raises(br.ModelSpecError, match="fit over time"):
        over_time.update(arena.records.iloc[:10])


def test_a_fit_saved_with_an_earlier_option_name_still_updates(tmp_path):
    """Fits saved before the API's one vocabulary recorded ``n_draws``; they load and update with ``draws``."""
    old, new = logs(3)
    saved = br.fit(br.Davidson(), old, draws=300)
    options = json.loads(saved.tree.attrs["bayesrank_options"])
    options["n_draws"] = options.pop("draws")
    saved.tree.attrs["bayesrank_options"] = json.dumps(options)
    saved.save(tmp_path / "old.nc")
    updated = br.Fit.load(tmp_path / "old.nc").update(new)
    assert updated.converged and updated.tree["posterior"].sizes["draw"] == 300
