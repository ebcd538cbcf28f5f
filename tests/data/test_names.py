"""The one rule for names (bayesrank/data/names.py), through every way records come in:
look-alike spellings are merged where safe and said, other look-alikes are kept apart and said."""

from __future__ import annotations

import json
import unicodedata

import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import bayesrank as br

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

#: Names with letters that have a decomposed (NFD) form.
BASES = st.sampled_from(["café", "gpt-4o", "Ünïcode model", "naïve-7b", "llama", "ｍｏｄｅｌ"])
#: Ways of writing a name that the rule makes one name again.
SAFE = st.sampled_from(["nfd", "zero-width", "bom", "spaces", "tab", "soft-hyphen", "nbsp"])


def disguised(name: str, how: str) -> str:
    return {"nfd": unicodedata.normalize("NFD", name),
            "zero-width": name[:2] + "\u200b" + name[2:],
            "bom": "\ufeff" + name,
            "spaces": f"  {name} ",
            "tab": f"\t{name}",
            "soft-hyphen": name[:1] + "\u00ad" + name[1:],
            "nbsp": name + "\u00a0"}[how]


def battles(pairs):
    return pd.DataFrame([{"model_a": a, "model_b": b, "winner": w} for a, b, w in pairs])


def as_files(frame: pd.DataFrame, tmp_path):
    """The same records as a pandas table, a CSV, a JSON-lines and a Parquet file."""
    csv, jsonl, parquet = tmp_path / "r.csv", tmp_path / "r.jsonl", tmp_path / "r.parquet"
    frame.to_csv(csv, index=False, encoding="utf-8")
    jsonl.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in frame.to_dict("records")),
                     encoding="utf-8")
    frame.to_parquet(parquet)
    return [frame, csv, jsonl, parquet]


@FAST
@given(base=BASES, how=SAFE)
def test_safe_spellings_become_one_name_and_are_said(tmp_path_factory, base, how):
    tmp_path = tmp_path_factory.mktemp("names")
    nfc = unicodedata.normalize("NFC", base)
    other = disguised(nfc, how)
    assume(other != nfc)  # (a name without composed letters has no other NFD form)
    frame = battles([(nfc, "x", "model_a"), (other, "x", "model_b"), ("x", "y", "tie")])
    for source in as_files(frame, tmp_path):
        data = br.load(source)
        assert data.items == tuple(sorted([nfc, "x", "y"])), (source, how)
        assert data.n_comparisons == 3
        assert sum(data.notes.values()) == 1  # the one record whose name changed is counted
        said = " ".join(data.warnings)
        assert "read as one" in said and ascii(other) in said and ascii(nfc) in said


#: Characters a renderer shows as nothing, other than the ones the rule removes (Unicode's
#: default-ignorable code points: variation selectors, the combining grapheme joiner, Hangul
#: fillers, a Khmer inherent vowel, a tag character; and a control character).
SHOWN_AS_NOTHING = ["\ufe0f", "\ufe00", "\U000e0100", "\u034f", "\u3164", "\u115f", "\u1160", "\uffa0",
                    "\u17b4", "\U000e0041", "\x07"]


@FAST
@given(base=st.sampled_from(["GPT-4o", "Llama-3", "claude v1", "Qwen"]),
       how=st.sampled_from(["swapcase", "fullwidth", "inner-zwj", "inner-spaces", *SHOWN_AS_NOTHING]))
def test_look_alikes_are_kept_apart_and_said(base, how):
    other = {"swapcase": base.swapcase(),
             "fullwidth": "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in base),
             "inner-zwj": base[:2] + "\u200d" + base[2:],
             "inner-spaces": base.replace(" ", "  ")}.get(how, base + how)
    assume(other != base)
    data = br.load(battles([(base, "x", "model_a"), (other, "x", "model_b"), ("x", "y", "tie")]))
    assert set(data.items) == {base, other, "x", "y"}
    said = " ".join(data.warnings)
    assert "look alike but are kept apart" in said and ascii(other) in said


def test_warnings_reach_every_fit_and_its_json(capsys, tmp_path):
    from bayesrank.cli import main

    path = tmp_path / "r.csv"
    battles([("café", "x", "model_a"), (unicodedata.normalize("NFD", "café"), "x", "model_b"),
             ("x", "GPT", "tie"), ("gpt", "x", "model_a"), ("GPT", "café", "model_b")]).to_csv(path, index=False)
    assert main(["fit", str(path), "--model", "bt", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any("read as one" in w for w in out["warnings"])
    assert any("look alike" in w and "'GPT'" in w and "'gpt'" in w for w in out["warnings"])
    assert out["accounting"]["notes"] == {
        "records with names in another Unicode form or holding invisible characters (normalised)": 1}
    fit = br.fit(br.BradleyTerry(), path)
    assert any("read as one" in w for w in fit.warnings)
    fit.save(tmp_path / "fit.nc")
    assert br.Fit.load(tmp_path / "fit.nc").data.warnings == fit.data.warnings


def test_judge_names_follow_the_rule():
    records = pd.DataFrame({"model_a": ["a", "a", "b"], "model_b": ["b", "c", "c"],
                            "judge_model": ["judge one", "judge one ", "\ufeffjudge one"],
                            "judge_preferred_model": ["a", "b", "c"]})
    data = br.load(records)
    assert data.judges == ("judge one",)
    assert any("judge name" in w for w in data.warnings)


def test_count_table_names_collide_after_the_rule():
    table = {"models": ["café", unicodedata.normalize("NFD", "café")], "X": [[0, 1]], "Y": [[1, 2, 0]]}
    with pytest.raises(br.DataError, match="names 'café' twice .*one name by the reading rule"):
        br.load(table)
