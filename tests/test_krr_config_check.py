"""The KRR family's config check (nystrom_bench.studies.krr.methods): scikit-learn's parameter validation runs only
where a block's options are not plainly valid, so that a Snakemake start-up does not import scikit-learn (issue 39);
what it accepts and the errors it gives are scikit-learn's."""

import math
import subprocess
import sys

import pytest
from sklearn.utils._param_validation import InvalidParameterError, StrOptions

from nystrom_bench.learners import KRR
from nystrom_bench.studies.krr.methods import PLAIN_CHOICES, KRRMethod, _plainly_valid

#: values around every boundary of KRR's constraints on the keys a block may set, of every type YAML gives
CANDIDATES = [None, True, False, 0, 1, 2, 5000, -1, 0.0, 0.5, 1.0, 1.5, -0.5, math.nan, math.inf, "exact", "nystrom",
              "gsa", "lla", "ncr", "uniform", "kmeans", "zz", "", "deprecated", [1], {"a": 1}]
KEYS = ["approximation", "mode", "n_components", "rank", "sampler", "n_landmarks", "alpha"]


def _sklearn_accepts(alpha, **opts):
    try:
        KRR(alpha=alpha, **opts)._validate_params()
    except (InvalidParameterError, TypeError):
        return False
    return True


@pytest.mark.parametrize("key", KEYS)
def test_what_passes_without_scikit_learn_passes_scikit_learns_check(key):
    passed = 0
    for value in CANDIDATES:
        opts, alpha = ({}, value) if key == "alpha" else ({key: value}, 0.1)
        if _plainly_valid(opts, alpha):
            passed += 1
            assert _sklearn_accepts(alpha, **opts), (key, value)
    assert passed or key == "n_landmarks"  # the deprecated name always goes to scikit-learn's check


def test_plain_choices_are_krrs_own():
    for key, choices in PLAIN_CHOICES.items():
        options = [c for c in KRR._parameter_constraints[key] if isinstance(c, StrOptions)]
        assert len(options) == 1 and options[0].options == choices, key


def test_plainly_valid_blocks():
    assert _plainly_valid({"approximation": "nystrom", "n_components": 20, "mode": "gsa", "sampler": "kmeans",
                           "rank": None}, 0.1)
    assert _plainly_valid({"n_components": 0.25}, 1)
    for opts, alpha in [({}, 0), ({}, -1.0), ({}, math.nan), ({}, True), ({"n_components": True}, 0.1),
                        ({"n_components": 1.5}, 0.1), ({"rank": 0}, 0.1), ({"mode": "zz"}, 0.1),
                        ({"n_landmarks": 20}, 0.1), ({"alpha": 0.1}, 0.1)]:
        assert not _plainly_valid(opts, alpha), (opts, alpha)


@pytest.mark.parametrize("opts,alpha", [({"mode": "zz"}, 0.1), ({"rank": 0}, 0.1), ({"n_components": 1.5}, 0.1),
                                        ({"approximation": "dense"}, 0.1), ({}, -1.0), ({"rank": 2.5}, 0.1)])
def test_a_bad_value_gets_scikit_learns_error(opts, alpha):
    with pytest.raises(InvalidParameterError) as want:
        KRR(alpha=alpha, **opts)._validate_params()
    with pytest.raises(InvalidParameterError) as got:
        KRRMethod("b", opts).check({"alpha": alpha}, {})
    assert str(got.value) == str(want.value)


def test_landmark_counts_default_and_given():
    assert KRRMethod("a", {}).landmark_counts({}) == [KRR().n_components]
    assert KRRMethod("a", {"n_components": 30}).landmark_counts({}) == [30]
    assert KRRMethod("a", {"n_components": 0.5}).landmark_counts({}) == []
    assert KRRMethod("a", {"approximation": "exact"}).landmark_counts({}) == []


def test_checking_a_krr_block_does_not_import_scikit_learn():
    code = """
import sys
from nystrom_bench.config import check
check({"studies": {"krr": {"datasets": ["diabetes"], "seeds": [0], "reference": "exact", "params": {"alpha": 0.1},
                           "kernels": {"g": {"kernel": "gaussian", "gamma": "median"}},
                           "methods": {"exact": {"approximation": "exact"},
                                       "ny": {"approximation": "nystrom", "n_components": 20, "mode": "gsa",
                                              "sampler": "ridge_leverage"}}}}})
assert "sklearn" not in sys.modules, "the config check imported scikit-learn"
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
