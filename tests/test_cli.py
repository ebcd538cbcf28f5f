"""The CLI contract: JSON fields, formats, outputs, and one-line errors with exit code 2."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import bayesrank as br
from bayesrank.cli import main
from bayesrank.model.papers import LEADERBOT_D1

JSON_FIELDS = {"framework", "method", "n_items", "n_comparisons", "n_cells", "nll", "loglik", "n_params",
               "converged", "items", "diagnostics", "warnings"}
ITEM_FIELDS = {"name", "rank", "score", "se", "lower", "upper", "rank_lower", "rank_upper"}


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_fit_json_contract(capsys):
    code, out, err = run(capsys, "fit", "arena-2024", "--model", "davidson", "--k-tie", "1", "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert JSON_FIELDS <= set(res)
    assert res["framework"] == "davidson" and res["method"] == "map"
    assert (res["n_items"], res["n_comparisons"], res["n_cells"]) == (129, 1374996, 3455)
    assert res["nll"] <= LEADERBOT_D1[20][1] + 1e-4
    assert res["loglik"] == pytest.approx(-res["nll"] * res["n_comparisons"])
    assert res["n_params"] == 2 * 129 - 1
    assert res["converged"] is True
    assert [it["rank"] for it in res["items"]] == list(range(1, 130))
    assert ITEM_FIELDS <= set(res["items"][0])
    assert res["items"][0]["name"] == "chatgpt-4o-latest"


def test_bt_drop_normalises_by_non_tie_comparisons(capsys):
    code, out, _ = run(capsys, "fit", "arena-2024", "--model", "bt", "--ties", "drop", "--format", "json")
    res = json.loads(out)
    assert res["n_comparisons"] == 1374996
    assert res["n_used"] == 1374996 - 281121
    assert res["nll"] <= LEADERBOT_D1[4][1] + 1e-4


def test_table_and_csv_formats(capsys, tmp_path):
    code, out, _ = run(capsys, "fit", "arena-2024", "--model", "bt", "--top", "5", "--out", str(tmp_path))
    assert code == 0
    assert "chatgpt-4o-latest" in out and "nll" in out
    assert {p.name for p in tmp_path.iterdir()} == {"fit.nc", "summary.json", "leaderboard.csv"}
    saved = br.Fit.load(tmp_path / "fit.nc")
    assert json.loads((tmp_path / "summary.json").read_text()) == json.loads(json.dumps(saved.to_json()))
    code, out, _ = run(capsys, "fit", "arena-2024", "--model", "bt", "--format", "csv")
    lines = out.strip().splitlines()
    assert lines[0].startswith("rank,name,score,se,lower,upper") and len(lines) == 130


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["fit", "no-such-data", "--model", "bt"], "neither a bundled dataset"),
        (["fit", "arena-2024", "--model", "elo"], "invalid choice"),
        (["fit", "arena-2024", "--model", "bt", "--k-tie", "2"], "--k-tie does not apply to bt"),
        (["fit", "arena-2024", "--model", "davidson", "--ties", "drop"], "--ties does not apply to davidson"),
        (["fit", "arena-2024", "--model", "bt", "--ties", "davidson"], "ties must be 'half' or 'drop'"),
        (["fit", "arena-2024", "--model", "bt", "--ties", "both"], "invalid choice"),
        (["fit", "arena-2024", "--model", "bt", "--top", "-1"], "argument --top: expected a whole number of at least"),
        (["fit", "arena-2024", "--model", "davidson", "--tie-intercept"], "tie_intercept only applies"),
        (["fit", "arena-2024"], "required: --model"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_usage_and_input_errors_exit_2_with_one_line(capsys, args, fragment):
    code, out, err = run(capsys, *args)
    assert code == 2
    assert fragment in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_bad_file_error_through_entry_point(tmp_path):
    bad = tmp_path / "battles.csv"
    bad.write_text("model_a,model_b,winner\ngpt-4,claude,model_a\ngpt-4,gpt-4,tie\n")
    proc = subprocess.run([sys.executable, "-m", "bayesrank.cli", "fit", str(bad), "--model", "bt"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "itself" in proc.stderr and "record 1" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_datasets_lists_bundled_sets(capsys):
    code, out, _ = run(capsys, "datasets")
    assert code == 0
    assert "arena-2024: 129 items" in out and "1,374,996 comparisons" in out
    assert "mtbench-judges" in out


def test_judge_aware_json_adds_judges_and_mle_exists(capsys):
    code, out, err = run(capsys, "fit", "mtbench-judges", "--model", "judge-aware", "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert res["mle_exists"] is True
    assert len(res["judges"]) == 20
    judge = res["judges"][0]
    assert {"name", "gamma", "se", "lower", "upper"} <= set(judge)
    assert judge["lower"] < judge["gamma"] < judge["upper"]
    log_gamma = np.log([j["gamma"] for j in res["judges"]])
    assert abs(log_gamma.sum()) < 1e-8


def test_options_come_from_the_framework_fields():
    """Every option of every framework is on the command line, with the field's help text."""
    import dataclasses

    from bayesrank.cli import _flag, build_parser
    from bayesrank.model.registry import FRAMEWORKS

    text = build_parser()._subparsers._group_actions[0].choices["fit"].format_help()
    for cls in FRAMEWORKS.values():
        for f in dataclasses.fields(cls):
            if f.name != "priors" and (cls.name, f.name) != ("dynamic", "base"):  # (a fit over time's base is --model)
                assert _flag(f.name) in text, f.name


def test_api_and_cli_report_the_same_fit(capsys):
    """The CLI adds nothing to the fit: its JSON is the API's to_json."""
    code, out, _ = run(capsys, "fit", "mtbench-judges", "--model", "btl", "--format", "json")
    assert code == 0
    cli = json.loads(out)
    api = br.fit(br.BTL(), "mtbench-judges").to_json()
    for key in ("warnings", "n_params", "mle_exists"):
        assert cli[key] == api[key], key
    # the same optimum; a structure fitted again in one process may run its log-density on the
    # hot tier (numba), whose rounding moves the last bits
    assert cli["nll"] == pytest.approx(api["nll"], rel=1e-12)
    for got, want in zip(cli["items"], api["items"], strict=True):
        assert {k: v for k, v in got.items() if isinstance(v, str | int)} == \
            {k: v for k, v in want.items() if isinstance(v, str | int)}
        assert {k: v for k, v in got.items() if isinstance(v, float)} == \
            pytest.approx({k: v for k, v in want.items() if isinstance(v, float)}, rel=1e-12, abs=1e-14)
    strip = ("seconds", "compile_seconds", "grad_norm")  # timings; the gradient at the optimum is rounding
    got = {k: v for k, v in cli["diagnostics"].items() if k not in strip}
    want = {k: v for k, v in api["diagnostics"].items() if k not in strip}
    assert {k: v for k, v in got.items() if not isinstance(v, float)} == \
        {k: v for k, v in want.items() if not isinstance(v, float)}
    assert {k: v for k, v in got.items() if isinstance(v, float)} == \
        pytest.approx({k: v for k, v in want.items() if isinstance(v, float)}, rel=1e-12)


def test_the_cli_passes_restarts_to_map_and_refuses_them_for_nuts():
    from bayesrank.cli import _fit_kwargs, build_parser
    from bayesrank.errors import BayesrankError

    parser = build_parser()
    args = parser.parse_args(["fit", "arena-2024", "--model", "bt", "--k-cov", "3", "--restarts", "2"])
    assert _fit_kwargs(args)["restarts"] == 2
    assert _fit_kwargs(parser.parse_args(["fit", "arena-2024", "--model", "bt"]))["restarts"] == 0
    with pytest.raises(BayesrankError, match="--restarts applies to --method map"):
        _fit_kwargs(parser.parse_args(["fit", "arena-2024", "--model", "bt", "--method", "nuts", "--restarts", "2"]))


def test_cluster_robust_intervals_from_the_command_line(capsys):
    code, out, err = run(capsys, "fit", "mtbench-judges", "--model", "bt", "--ties", "drop", "--cluster",
                         "question_id,judge_model", "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert res["cluster"] == ["question_id", "judge_model"] and res["interval_method"] == "sandwich"
    assert "two-way cluster-robust" in res["covariance"]
    api = br.fit(br.BradleyTerry(ties="drop"), "mtbench-judges", cluster=("question_id", "judge_model"))
    assert [it["se"] for it in res["items"]] == pytest.approx(api.leaderboard()["se"].tolist(), rel=1e-12)
    code, out, _ = run(capsys, "fit", "mtbench-judges", "--model", "bt", "--ties", "drop", "--cluster", "question_id")
    assert "allowing for dependence within clusters of 'question_id'" in out


def test_random_effects_from_the_command_line(capsys):
    code, out, err = run(capsys, "fit", "mtbench-judges", "--model", "random-effects", "--base", "bt:ties=drop",
                         "--cluster", "judge_model", "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert res["spec"]["base"]["framework"] == "bt" and res["spec"]["cluster"] == "judge_model"
    assert res["interval_method"] == "laplace" and res["random_effects"]["n_clusters"] == 20
    code, out, _ = run(capsys, "fit", "mtbench-judges", "--model", "random-effects", "--base", "bt:ties=drop",
                       "--cluster", "judge_model", "--top", "3")
    assert "clusters of 'judge_model': 20; their scores deviate" in out


@pytest.mark.parametrize("args,fragment", [
    (["--model", "bt", "--cluster", "session"], "cluster column(s) 'session' (cluster=) not found"),
    (["--model", "bt", "--cluster", "question_id,judge_model", "--intervals", "bootstrap"], "one column"),
    (["--model", "random-effects", "--base", "bt"], "needs --cluster COLUMN, one column"),
    (["--model", "random-effects", "--base", "judge-aware", "--cluster", "judge_model"], "BradleyTerry, RaoKupper"),
])
def test_bad_cluster_options_exit_2_with_one_line(capsys, args, fragment):
    code, out, err = run(capsys, "fit", "mtbench-judges", *args)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------- mismatched inputs (issue 37)
def test_gars_refuses_a_fit_of_other_data_with_the_same_items(tmp_path, capsys, mtbench):
    br.fit(br.Davidson(k_tie=0), mtbench).save(tmp_path / "fit.nc")
    other = mtbench.subset(np.arange(mtbench.n_cells) % 2 == 0)  # the same six items, other counts
    assert set(other.items) == set(mtbench.items)
    other.to_frame().to_csv(tmp_path / "other.csv", index=False)
    code, _, err = run(capsys, "gars", str(tmp_path / "other.csv"), "--fit", str(tmp_path / "fit.nc"))
    assert code == 2 and "was fitted to other data" in err
    code, _, err = run(capsys, "gars", "mtbench-judges", "--fit", str(tmp_path / "fit.nc"), "--format", "json")
    assert code == 0, err


def test_gars_says_which_reading_option_made_the_data_differ(tmp_path, capsys):
    """The same file read with another option than the fit's (duplicates dropped there): the
    refusal names the option."""
    path = tmp_path / "b.csv"
    path.write_text("id,model_a,model_b,winner\n1,a,b,model_a\n1,a,b,model_a\n2,b,c,tie\n3,c,a,model_b\n"
                    "4,a,c,model_a\n")
    assert run(capsys, "fit", str(path), "--model", "bt", "--out", str(tmp_path / "f"), "--drop-duplicates")[0] == 0
    code, _, err = run(capsys, "gars", str(path), "--fit", str(tmp_path / "f"))
    assert code == 2 and "read with other options (drop_duplicates=True for the fit, False here)" in err
    assert run(capsys, "gars", str(path), "--fit", str(tmp_path / "f"), "--drop-duplicates")[0] == 0


def test_compare_refuses_one_model_before_sampling(capsys):
    # (the data do not exist: refused before anything is read or sampled)
    for models in (["bt"], ["bt", "bt"]):
        code, _, err = run(capsys, "compare", "no-such-data.csv", "--models", *models)
        assert code == 2 and "no-such-data" not in err
        assert "at least 2 models" in err or "more than once" in err


def test_style_effects_without_an_estimate_are_said(tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("model_a,model_b,winner,length\nx,y,tie,1\ny,z,model_a,2\nz,x,tie,3\n")
    code, out, err = run(capsys, "fit", str(path), "--model", "bt", "--contrasts", "length")
    assert code == 0, err
    assert "length: not estimated" in out


def test_table_output_shows_control_characters_as_escapes(tmp_path, capsys):
    path = tmp_path / "r.parquet"
    import pandas as pd

    pd.DataFrame({"model_a": ["\x1b[2Jevil", "y", "z"], "model_b": ["y", "z", "\x1b[2Jevil"],
                  "winner": ["model_a", "tie", "model_b"]}).to_parquet(path)
    code, out, _ = run(capsys, "fit", str(path), "--model", "davidson")
    assert code == 0 and "\x1b" not in out and "\\x1b[2Jevil" in out
    code, out, _ = run(capsys, "fit", str(path), "--model", "davidson", "--format", "json")
    assert "\\u001b[2Jevil" in out  # JSON keeps the name, escaped by JSON's own rule


# ---------------------------------------------------------------- next-pairs and provisional
@pytest.fixture(scope="module")
def saved_small_fit(tmp_path_factory):
    from tests.conftest import newcomer

    out = tmp_path_factory.mktemp("fit")
    data = newcomer(np.linspace(0.6, -0.6, 9), 200, 3, "m04", np.random.default_rng(0))
    br.fit(br.BradleyTerry(ties="drop"), data).save(out / "fit.nc")
    return out


def test_next_pairs_reads_a_fit_folder_or_file_in_every_format(capsys, saved_small_fit):
    code, out, err = run(capsys, "next-pairs", str(saved_small_fit), "--budget", "120", "--goal", "top-k", "--k", "3",
                         "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert res["goal"] == "top-k" and res["k"] == 3 and sum(p["n"] for p in res["pairs"]) == 120
    code, out, _ = run(capsys, "next-pairs", str(saved_small_fit / "fit.nc"), "--budget", "50", "--goal", "model",
                       "--model", "m04", "--format", "csv")
    lines = out.strip().splitlines()
    assert code == 0 and lines[0] == "model_a,model_b,n,value"
    assert sum(int(line.split(",")[2]) for line in lines[1:]) == 50
    code, out, _ = run(capsys, "next-pairs", str(saved_small_fit), "--budget", "30")
    assert code == 0 and "next 30 votes to every rank interval" in out and "rank interval width" in out


def test_next_pairs_bad_input_exits_2_with_one_line(capsys, saved_small_fit, tmp_path):
    for args, message in ((["--budget", "0"], "argument --budget: expected a whole number of at least 1, got 0"),
                          (["--goal", "top-k", "--budget", "5"], "needs k"),
                          (["--goal", "model", "--model", "nobody", "--budget", "5"], "unknown model 'nobody'")):
        code, out, err = run(capsys, "next-pairs", str(saved_small_fit), *args)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out
    code, _, err = run(capsys, "next-pairs", str(tmp_path), "--budget", "5")
    assert code == 2 and "holds no fit.nc" in err


def test_provisional_command_names_the_battles(capsys, saved_small_fit):
    code, out, err = run(capsys, "provisional", str(saved_small_fit), "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert res["max_span"] == 3 and [r["name"] for r in res["rows"]] == ["m04"] and res["rows"][0]["battles"] > 0
    code, out, _ = run(capsys, "provisional", str(saved_small_fit))
    assert code == 0 and "provisional rows: 1" in out and "m04" in out


def test_a_signal_python_cannot_raise_ends_the_run_without_a_traceback(capsys, monkeypatch):
    """SIGTERM arriving inside a weak-reference callback (where Python can only report an exception,
    "Exception ignored ... Traceback") ends the run with 143 and one line, and nothing else."""
    import signal
    import weakref

    from bayesrank import cli

    def command(args):
        class Thing:
            pass

        def callback(ref):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs here, inside the callback
                pass

        thing = Thing()
        ref = weakref.ref(thing, callback)
        del thing
        assert ref() is None
        return 0

    monkeypatch.setitem(cli.COMMANDS, "datasets", command)
    assert main(["datasets"]) == 143
    err = capsys.readouterr().err
    assert err == "bayesrank: terminated\n"


@pytest.mark.parametrize(("argv", "fragment"), [
    (["gars", "mtbench-judges", "--draws", "0"], "argument --draws: expected a whole number of at least 1, got 0"),
    (["provisional", "x.nc", "--seed", "-4"], "argument --seed: expected a whole number of at least 0, got -4"),
    (["report", "mtbench-judges", "--top", "-3"], "argument --top: expected a whole number of at least 0"),
    (["next-pairs", "x.nc", "--budget", "1" + "0" * 21], "at most 9,007,199,254,740,992"),
    (["fit", "mtbench-judges", "--chains", "two"], "argument --chains: expected a whole number, got 'two'"),
])
def test_whole_number_options_are_checked_before_any_work(capsys, argv, fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and "internal error" not in err


def test_a_test_fraction_that_leaves_nothing_to_train_on_is_said(capsys):
    assert main(["evaluate", "mtbench-judges", "--model", "bt", "--test-fraction", "0.999"]) == 2
    assert "leaves no cell to train on" in capsys.readouterr().err


def test_nuts_options_with_map_are_refused_not_ignored(capsys):
    assert main(["fit", "mtbench-judges", "--model", "bt", "--method", "map", "--chains", "4", "--no-whiten"]) == 2
    err = capsys.readouterr().err
    assert "--chains, --whiten apply to --method nuts only; drop them, or sample with --method nuts" in err


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_csv_printed_on_a_terminal_cannot_drive_it(tmp_path):
    """A CSV on a terminal shows a name's escape sequences as text; piped, it stays the data's."""
    from tests.conftest import terminal_bytes

    path = tmp_path / "term.csv"
    rows = ["model_a,model_b,winner"] + [f"{a},{b},{w}" for a, b, w in
                                          [("\x1b[31mred", "ok", "model_a"), ("ok", "fine", "tie"),
                                           ("fine", "\x1b[31mred", "model_b"), ("ok", "\x1b[31mred", "model_a")]]
    path.write_text("\n".join(rows) + "\n")
    argv = [sys.executable, "-m", "bayesrank.cli", "fit", str(path), "--model", "bt", "--format", "csv"]
    returncode, out = terminal_bytes(argv)
    assert returncode == 0 and b"\x1b" not in out and b"\\x1b[31mred" in out
    piped = subprocess.run(argv, capture_output=True, check=True).stdout
    assert b"\x1b[31mred" in piped
