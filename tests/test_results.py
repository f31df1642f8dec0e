"""Result rows with coordinates: identity + coords is unique; files are readable by others."""

import os
import stat

import pandas as pd
import pytest

from nystrom_bench import results


def _row(m, seed=0, method="ny"):
    return {"dataset": "d", "method": method, "kernel": "g", "seed": seed, "coords": {"m": m},
            "params": {"alpha": 0.1}, "metrics": {"mse": 1.0 / m}}


def test_rows_differing_only_in_a_coord_aggregate(tmp_path):
    a = results.frame("s", [_row(10), _row(20)], coords=("m",))
    b = results.frame("s", [_row(10, seed=1)], coords=("m",))
    assert list(a.columns) == ["study", "dataset", "method", "kernel", "seed", "m", "mse", "assumption", "params"]
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_csv(tmp_path / "b.csv", index=False)
    df = results.aggregate([tmp_path / "a.csv", tmp_path / "b.csv"], tmp_path / "all.csv", coords=("m",))
    assert len(df) == 3 and len(pd.read_csv(tmp_path / "all.csv")) == 3
    b.to_csv(tmp_path / "c.csv", index=False)  # the same identity and coords twice: an error
    with pytest.raises(ValueError, match="duplicate results"):
        results.aggregate([tmp_path / "b.csv", tmp_path / "c.csv"], tmp_path / "bad.csv", coords=("m",))
    assert not (tmp_path / "bad.csv").exists()


def test_undeclared_coord_is_an_error():
    with pytest.raises(ValueError, match=r"coords \['m'\] the study does not declare"):
        results.frame("s", [_row(10)], coords=())


def test_result_file_mode_is_0644_under_the_usual_umask(tmp_path):
    old = os.umask(0o022)
    try:
        (tmp_path / "a.csv").write_text(results.frame("s", [_row(10)], ("m",)).to_csv(index=False))
        results.aggregate([tmp_path / "a.csv"], tmp_path / "out.csv", coords=("m",))
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.csv").stat().st_mode) == 0o644


@pytest.mark.parametrize("value,text", [(300, "300"), (300.0, "300"), (1e-15, "1e-15"), (0.1, "0.1"),
                                        ("x", "x"), (True, "True")])
def test_format_coord(value, text):
    assert results.format_coord(value) == text
