"""User-caused errors: one base class, each kind also the built-in exception it refines, and
keyword checking that names the public function, its options and the nearest one."""

import pytest

import bayesrank as br
from bayesrank.errors import (
    BayesrankError,
    DataError,
    FitFileError,
    ModelSpecError,
    OutputError,
    options_checked,
)


def test_every_error_is_a_bayesrank_error_and_its_builtin_kind():
    for cls, builtin in ((DataError, ValueError), (ModelSpecError, ValueError), (OutputError, OSError),
                         (FitFileError, ValueError)):
        assert issubclass(cls, BayesrankError) and issubclass(cls, builtin)
        assert getattr(br, cls.__name__) is cls


def test_an_unknown_keyword_names_the_function_its_options_and_the_nearest():
    @options_checked
    def summarise(fit, data=None, *, level=0.95, random_seed=0):
        """Doc."""
        return level

    assert summarise(None, level=0.5) == 0.5 and summarise.__name__ == "summarise" and summarise.__doc__ == "Doc."
    where = summarise.__module__.rsplit(".", 1)[0]
    with pytest.raises(ModelSpecError) as err:
        summarise(None, levle=0.5)
    assert str(err.value) == (f"{where}.summarise() has no option 'levle' (did you mean 'level'?); "
                              "its options: fit, data, level, random_seed.")
    with pytest.raises(ModelSpecError, match=r"has no option 'xyz'; its options"):
        summarise(None, xyz=1)


def test_a_function_taking_any_keywords_is_left_as_it_is():
    def forwards(**kwargs):
        return kwargs

    assert options_checked(forwards) is forwards


def test_integer_options_take_numpy_integers_and_keep_python_ints():
    """One rule for every integer option (bayesrank.errors.as_count): an integer from a NumPy array
    is an integer; a bool, a float or a string is not."""
    import json

    import numpy as np

    from bayesrank.errors import as_count

    assert [as_count(v) for v in (np.int64(3), 3, np.uint8(0))] == [3, 3, 0]
    assert all(as_count(v) is None for v in (True, np.True_, 3.0, "3", -1, None))
    assert as_count(np.int32(1), least=2) is None
    for fw in (br.Davidson(k_tie=np.int64(1)), br.RaoKupper(k_tie=np.int64(2)), br.BradleyTerry(k_cov=np.int64(0)),
               br.HJA(rank=np.int64(1))):
        values = [getattr(fw, f) for f in ("k_tie", "k_cov", "rank") if getattr(fw, f, None) is not None]
        assert values and all(type(v) is int for v in values)
        json.loads(fw.spec_json())   # the spec of a fit's file: plain JSON
    with pytest.raises(br.ModelSpecError, match="k_tie must be a non-negative integer"):
        br.Davidson(k_tie=1.0)


def test_every_column_option_reads_names_by_one_rule():
    """bayesrank.errors.column_names: one name or several, each text, each once — through the
    covariates, cluster and GARS features options alike (a single name is never split into its
    letters)."""
    import pandas as pd

    from bayesrank.errors import column_names
    from bayesrank.gars.dml.records import read_records
    from bayesrank.gars.dml.simulate import simulator

    assert column_names("user", "cluster") == ("user",)
    assert column_names(["user", "prompt"], "cluster") == ("user", "prompt")
    assert column_names(None, "cluster") == ()
    frame = pd.DataFrame({"model_a": ["x", "y", "z"], "model_b": ["y", "z", "x"], "winner": ["model_a"] * 3,
                          "user": ["u", "v", "u"], "length": [1.0, 2.0, 3.0]})
    for option in ("covariates", "cluster"):
        with pytest.raises(br.DataError, match=rf"{option}= names the column\(s\) 'user' more than once"):
            br.load(frame, **{option: ["user", "user"]})
        with pytest.raises(br.DataError, match=rf"{option}= takes column names \(text\), got \[''\]"):
            br.load(frame, **{option: [""]})
    records = simulator("nonlinear_tie", K=3, p=2, judge_sigma=0.3, random_seed=1).records(60, random_seed=2)
    one = read_records(records, features="x0")
    assert one.feature_names == read_records(records, features=["x0"]).feature_names == ("x0",)
