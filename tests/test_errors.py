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
