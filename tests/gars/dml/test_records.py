"""DMLRank reads bundled datasets by name, as every other command does."""

import json

import pytest

import bayesrank as br
from bayesrank.cli import main
from bayesrank.gars.dml import read_records


def test_bundled_judge_records_are_contexts_of_question_and_judge(capsys):
    records = read_records("mtbench-judges")
    assert records.n_labels == 9706 and records.n_items == 6           # the 294 'unknown' verdicts left out
    assert main(["dml", "mtbench-judges", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["items"][0]["name"] == "gpt-4"


def test_bundled_pair_counts_are_refused_with_the_reason_and_the_command_that_fits(capsys):
    with pytest.raises(br.DataError, match="bayesrank gars arena-2024"):
        read_records("arena-2024")
    assert main(["dml", "arena-2024"]) == 2
    err = capsys.readouterr().err
    assert "does not exist" not in err and "without contexts" in err


def test_judge_probabilities_and_the_propensity_clip_are_checked(tmp_path):
    """A judge column named twice, a judge 'probability' that is not one, and a clip of the
    labelling propensities outside (0, 1) are refused in words, before any cross-fitting."""
    import pandas as pd

    from bayesrank.gars.dml.simulate import simulator

    frame = simulator("nonlinear_tie", K=3, p=2, judge_sigma=0.3, random_seed=1).records(120, random_seed=2)
    with pytest.raises(br.DataError, match=r"judge_probs= names the column\(s\) 'judge_a' more than once"):
        read_records(frame, features=["x0"], judge_probs=["judge_a", "judge_b", "judge_a"])
    bad = frame.assign(judge_a=frame["judge_a"].astype(object))
    bad.loc[bad.index[3], "judge_a"] = "high"
    with pytest.raises(br.DataError, match=r"record 3: judge probability 'judge_a' = 'high' is not a probability"):
        read_records(bad, features=["x0"], judge_probs=["judge_a", "judge_b", "judge_tie"])
    with pytest.raises(br.DataError, match="is not a probability"):
        read_records(frame.assign(judge_b=frame["judge_b"] + 1.5), judge_probs=["judge_a", "judge_b", "judge_tie"])
    path = tmp_path / "dml.csv"
    pd.DataFrame(frame).to_csv(path, index=False)
    for clip in ("2", "-1", "0"):
        assert main(["dml", str(path), "--features", "x0,x1", "--pi-clip", clip]) == 2
