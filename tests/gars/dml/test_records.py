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
