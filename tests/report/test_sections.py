"""What a reader of a report gets: each warning once, no internal labels, the whole leaderboard
sortable in a real browser, and its CSV."""

import base64
import html as html_module
import io
import re

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.report import Report
from bayesrank.report.sections import board, csv_link, data_rows, distinct_warnings, sortable_table
from tests.report.test_document import render


@pytest.fixture(scope="module")
def judge_fits(mtbench):
    return {"judge-aware": br.fit(br.JudgeAware(), mtbench), "btl": br.fit(br.BTL(), mtbench)}


def test_each_warning_once_with_the_models_it_concerns(judge_fits):
    html = Report(judge_fits).html()
    warnings = distinct_warnings(judge_fits)
    assert len(warnings) == len(set(judge_fits["btl"].warnings) | set(judge_fits["judge-aware"].warnings))
    for text, owners in warnings:
        escaped = html_module.escape(text, quote=True)
        assert html.count(f"<div class='warn'>{escaped}<div class='who'>") == 1
    shared = [owners for text, owners in warnings if text.startswith("positions were never swapped")]
    assert shared == [["judge-aware", "btl"]] and "<div class='who'>all models</div>" in html


def test_readers_see_words_not_internal_names(judge_fits):
    summary = judge_fits["btl"].data.summary()
    rows = data_rows(summary)
    assert not {"n_cells", "wins_a", "wins_b", "n_items"} & set(rows["what"])
    assert rows.set_index("what").loc["pairs compared", "value"] == "15 of 15 possible"
    html = Report(judge_fits).html()
    for label in ("n_cells", "wins_a", "wins_b", "n_comparisons", "rank_lower"):
        assert not re.search(rf">\s*{label}\s*<", html)


def test_the_whole_leaderboard_sorts_in_a_browser_and_downloads_as_csv(tmp_path):
    names = ["=HYPERLINK(1)", "beta", "alpha", "gamma"]
    rng = np.random.default_rng(3)
    a, b = np.triu_indices(4, 1)
    wins = rng.integers(20, 60, (a.size, 2))
    data = br.Comparisons.from_cells(np.array(names)[a], np.array(names)[b], wins[:, 0], wins[:, 1])
    fit = br.fit(br.BradleyTerry(), data)
    table = board(fit)
    assert list(table["model"]) == list(fit.leaderboard()["name"]) and len(table) == 4
    link = csv_link(fit.leaderboard(elo=True), "board.csv")
    payload = re.search(r"base64,([A-Za-z0-9+/=]+)'", link).group(1)
    frame = pd.read_csv(io.StringIO(base64.b64decode(payload).decode()))
    assert len(frame) == 4 and "'=HYPERLINK(1)" in set(frame["name"])       # a formula is shown, never run
    # a click on "model" sorts the rows by name, a second click reverses them
    page = tmp_path / "board.html"
    script = ("<script>window.addEventListener('load',function(){var th=document.querySelectorAll('th')[1];"
              "th.click();var up=document.querySelector('tbody tr td:nth-child(2)').textContent;th.click();"
              "var down=document.querySelector('tbody tr td:nth-child(2)').textContent;"
              "document.body.setAttribute('data-sorted',up+'|'+down);});</script>")
    from bayesrank.report.sections import SORT_SCRIPT
    page.write_text(f"<html><body>{sortable_table(table)}{SORT_SCRIPT}{script}</body></html>")
    dom, console = render(page, tmp_path)
    assert 'data-sorted="=HYPERLINK(1)|gamma"' in dom and console == []


def test_judges_observed_and_predicted_rates_are_in_the_report(judge_fits):
    from bayesrank.report.sections import observed_predicted

    html = Report(judge_fits).html()
    assert html.count("<h2>Judges and positions</h2>") == 1                       # data-level: once
    assert html.count("<h3>Judges: discrimination γ") == 1                         # judge-aware only, not BTL
    glm = re.search(r"<tr><td class='l'>zai-org/GLM-4.5-Air-FP8</td>.*?</tr>", html).group(0)
    assert "<td class='l'>yes</td>" in glm and "<td class='l'>first</td>" in glm    # follows the first position
    rates, metrics = observed_predicted(judge_fits["btl"])
    board = judge_fits["btl"].leaderboard()
    np.testing.assert_allclose(rates["observed win %"], 100 * board["win_rate"])
    np.testing.assert_allclose(rates["predicted win %"], 100 * board["pred_win_rate"])
    assert html.count("<h3>Observed against predicted</h3>") == 2 and metrics["kld"] >= 0
