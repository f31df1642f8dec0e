"""Downloads against a local HTTP server on 127.0.0.1 started by the test (no network)."""

import bz2
import hashlib
import io
import logging
import os
import stat
import subprocess
import sys
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from nystrom_bench import data
from nystrom_bench.data.catalog import _validate_entry
from nystrom_bench.data.download import DownloadError, LockFile, decompress, fetch

SVM = b"1 1:0.5 3:1.0\n-1 2:2.0\n1 1:1.5 2:0.5 3:-1\n-1 3:0.25\n"
KEEL_REG = (b"@relation house\n@attribute P1 real[2,7322564]\n@attribute P5p1 real[0.1,0.9]\n"
            b"@attribute price real[0,500001]\n@inputs P1, P5p1\n@outputs price\n@data\n"
            b"120, 0.5, 41000\n33, 0.25, 150000.5\n7, 0.75, 99999\n")


def _zip(name, payload):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(name, payload)
    return buf.getvalue()


def _mat(**arrays):
    import scipy.io

    buf = io.BytesIO()
    scipy.io.savemat(buf, arrays)
    return buf.getvalue()


def _ssl_mat():
    import scipy.sparse

    return _mat(X=scipy.sparse.csr_matrix(np.array([[0, 1.5, 0], [2.0, 0, 0], [0, 0, -1.0], [3.0, 0, 0.5]])),
                y=np.array([[1.0], [-1.0], [1.0], [-1.0]]))


ROUTES = {
    "/SSL,set=9,data.mat": _ssl_mat(),
    "/wrong.mat": _mat(A=np.eye(2)),
    "/garbage.mat": b"MATLAB 5.0 MAT-file, not really",
    "/house.zip": _zip("house.dat", KEEL_REG),
    "/ok.svm": SVM,
    "/ok2.svm": SVM,
    "/ok.svm.bz2": bz2.compress(SVM),
    "/corrupt.svm.bz2": b"BZh91AY&SY this is not bzip2 data at all",
    "/bad.svm": b"1 1:0.5\n-1 2:oops\n",
    "/test.svm": b"-1 1:2.0\n1 2:1.0\n",
    "/three.svm": b"1 1:1\n2 1:2\n3 1:3\n1 1:4\n3 1:5\n",
    "/three.t.svm": b"2 1:6\n3 1:7\n1 1:8\n",
}


class Handler(BaseHTTPRequestHandler):
    hits = {}

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802 - http.server API
        Handler.hits[self.path] = Handler.hits.get(self.path, 0) + 1
        if self.path == "/slow":
            time.sleep(1.5)  # longer than the client's timeout; bounded
            return self._send(SVM)
        if self.path == "/stall":  # part of the body, then nothing: the client is killed meanwhile
            self.send_response(200)
            self.send_header("Content-Length", str(len(SVM) * 10))
            self.end_headers()
            self.wfile.write(SVM)
            self.wfile.flush()
            time.sleep(3.0)  # bounded
            return
        if self.path == "/truncated":
            self.send_response(200)
            self.send_header("Content-Length", str(len(SVM) * 10))
            self.end_headers()
            self.wfile.write(SVM)
            return  # closes the connection early
        if self.path == "/flaky" and Handler.hits[self.path] <= 2:
            self.send_response(503)
            self.end_headers()
            return
        if self.path == "/flaky":
            return self._send(SVM)
        if self.path == "/down":  # a server that stays down: retried, then given up
            self.send_response(503)
            self.end_headers()
            return
        body = ROUTES.get(self.path)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        self._send(body)

    def _send(self, body):
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
            pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def leftovers(folder):
    return [p.name for p in Path(folder).rglob("*") if p.is_file() and (".part" in p.name or ".tmp" in p.name)]


@pytest.fixture
def umask022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path):
    return stat.S_IMODE(Path(path).stat().st_mode)


def test_success_records_checksum_then_verifies(server, tmp_path):
    lock = LockFile(tmp_path / "datasets.lock")
    dest = fetch(f"{server}/ok.svm", tmp_path / "ok.svm", lock=lock, key="toy/ok.svm", retries=1)
    assert dest.read_bytes() == SVM
    digest = lock.get("toy/ok.svm")
    assert len(digest) == 64 and "commit this file" in (tmp_path / "datasets.lock").read_text()
    fetch(f"{server}/ok.svm", tmp_path / "again.svm", lock=lock, key="toy/ok.svm", retries=1)


def test_checksum_mismatch_is_an_error_and_leaves_nothing(server, tmp_path):
    with pytest.raises(DownloadError, match="checksum mismatch .* expected sha256 0+"):
        fetch(f"{server}/ok.svm", tmp_path / "x.svm", sha256="0" * 64, retries=1)
    assert not (tmp_path / "x.svm").exists() and not leftovers(tmp_path)


def test_404_is_permanent_and_falls_through_to_mirror(server, tmp_path):
    Handler.hits.clear()
    with pytest.raises(DownloadError, match="HTTP 404"):
        fetch(f"{server}/nothing", tmp_path / "n.svm", retries=3, backoff=0.01)
    assert Handler.hits["/nothing"] == 1  # not retried
    dest = fetch([f"{server}/nothing", f"{server}/ok2.svm"], tmp_path / "m.svm", retries=2, backoff=0.01)
    assert dest.read_bytes() == SVM and not leftovers(tmp_path)


def test_timeout_is_retried_then_reported(server, tmp_path):
    Handler.hits.clear()
    t0 = time.perf_counter()
    with pytest.raises(DownloadError, match="slow: .*(timed out|Timeout)"):
        fetch(f"{server}/slow", tmp_path / "s.svm", timeout=0.3, retries=2, backoff=0.01)
    assert Handler.hits["/slow"] == 2 and time.perf_counter() - t0 < 5
    assert not (tmp_path / "s.svm").exists() and not leftovers(tmp_path)


def test_truncated_body_is_detected(server, tmp_path):
    with pytest.raises(DownloadError, match="truncated|IncompleteRead"):
        fetch(f"{server}/truncated", tmp_path / "t.svm", retries=2, backoff=0.01)
    assert not (tmp_path / "t.svm").exists() and not leftovers(tmp_path)


def test_server_errors_are_retried_with_backoff(server, tmp_path):
    Handler.hits.clear()
    dest = fetch(f"{server}/flaky", tmp_path / "f.svm", retries=3, backoff=0.01)
    assert dest.read_bytes() == SVM and Handler.hits["/flaky"] == 3


def test_decompress_and_corrupt_archive(server, tmp_path):
    raw = fetch(f"{server}/ok.svm.bz2", tmp_path / "ok.svm.bz2", retries=1)
    assert decompress(raw, tmp_path / "ok.svm").read_bytes() == SVM
    bad = fetch(f"{server}/corrupt.svm.bz2", tmp_path / "c.svm.bz2", retries=1)
    with pytest.raises(DownloadError, match="corrupt or unreadable archive"):
        decompress(bad, tmp_path / "c.svm")
    assert not (tmp_path / "c.svm").exists() and not leftovers(tmp_path)


def test_downloads_decompressed_files_and_lock_file_are_0644(server, tmp_path, umask022):
    lock = LockFile(tmp_path / "datasets.lock")
    raw = fetch(f"{server}/ok.svm.bz2", tmp_path / "m.svm.bz2", lock=lock, key="toy/m.svm.bz2", retries=1)
    plain = decompress(raw, tmp_path / "m.svm")
    zipped = decompress(fetch(f"{server}/house.zip", tmp_path / "house.zip", retries=1), tmp_path / "house.dat")
    for path in (raw, plain, zipped, lock.path):
        assert _mode(path) == 0o644, path


def test_a_killed_download_leaves_only_what_the_next_run_removes(server, tmp_path):
    dest = tmp_path / "raw" / "k.svm"
    code = ("from nystrom_bench.data.download import fetch; "
            f"fetch({server + '/stall'!r}, {str(dest)!r}, retries=1, timeout=30)")
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 30
        while not leftovers(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        left = leftovers(tmp_path)
    finally:
        proc.kill()
        proc.wait()
    assert left, (f"the writer left no temporary file (exit status {proc.returncode}; -9: still running after the "
                  "30 s hang guard, a hang, not slowness: it starts writing within about a second)")
    assert left[0].startswith(".k.svm.") and not dest.exists()  # the killed writer's temporary
    assert leftovers(tmp_path) == left
    fetch(f"{server}/ok.svm", dest, retries=1)  # the next write of the same file cleans up
    assert dest.read_bytes() == SVM and not leftovers(tmp_path)


@pytest.fixture
def registry(monkeypatch, server):
    entries = {
        "toy": {"task": "binary", "source": "url", "format": "svmlight", "shape": [4, 3, 2],
                "split": {"test_fraction": 0.5}, "files": {"data": [f"{server}/ok.svm.bz2"]}},
        "toy-split": {"task": "binary", "source": "url", "format": "svmlight", "shape": [6, 3, 2],
                      "split": {"source": True},
                      "files": {"train": [f"{server}/ok.svm"], "test": [f"{server}/test.svm"]}},
        "toy-classes": {"task": "binary", "source": "url", "format": "svmlight", "shape": [6, 1, 2],
                        "split": {"source": True}, "classes": [1, 3],
                        "files": {"train": [f"{server}/three.svm"], "test": [f"{server}/three.t.svm"]}},
        "toy-bad": {"task": "binary", "source": "url", "format": "svmlight", "shape": [2, 3, 2],
                    "split": {"test_fraction": 0.5}, "files": {"data": [f"{server}/bad.svm"]}},
        "toy-corrupt": {"task": "binary", "source": "url", "format": "svmlight", "shape": [4, 3, 2],
                        "split": {"test_fraction": 0.5}, "files": {"data": [f"{server}/corrupt.svm.bz2"]}},
        "toy-gone": {"task": "binary", "source": "url", "format": "svmlight", "shape": [4, 3, 2],
                     "split": {"test_fraction": 0.5}, "files": {"data": [f"{server}/nothing"]},
                     "offline": "wisconsin"},
        "toy-down": {"task": "binary", "source": "url", "format": "svmlight", "shape": [4, 3, 2],
                     "split": {"test_fraction": 0.5}, "files": {"data": [f"{server}/down"]},
                     "offline": "wisconsin"},
        "toy-gone-nothing-offline": {"task": "binary", "source": "url", "format": "svmlight", "shape": [4, 3, 2],
                                     "split": {"test_fraction": 0.5}, "files": {"data": [f"{server}/nothing"]}},
        "toy-mat": {"task": "binary", "source": "url", "format": "mat", "shape": [4, 3, 2],
                    "split": {"test_fraction": 0.5}, "files": {"data": [f"{server}/SSL,set=9,data.mat"]}},
        "toy-mat-keys": {"task": "binary", "source": "url", "format": "mat", "shape": [2, 2, 2],
                         "split": {"test_fraction": 0.5}, "files": {"data": [f"{server}/wrong.mat"]}},
        "toy-mat-bad": {"task": "binary", "source": "url", "format": "mat", "shape": [2, 2, 2],
                        "split": {"test_fraction": 0.5}, "files": {"data": [f"{server}/garbage.mat"]}},
        "toy-keel-reg": {"task": "regression", "source": "url", "format": "keel", "shape": [3, 2],
                         "split": {"test_fraction": 0.34}, "files": {"data": [f"{server}/house.zip"]}},
        "toy-shape": {"task": "binary", "source": "url", "format": "svmlight", "shape": [5, 3, 2],
                      "split": {"test_fraction": 0.5}, "files": {"data": [f"{server}/ok2.svm"]}},
        "toy-sha": {"task": "binary", "source": "url", "format": "svmlight", "shape": [4, 3, 2],
                    "split": {"test_fraction": 0.5}, "files": {"data": [f"{server}/ok.svm"]},
                    "sha256": {"data": hashlib.sha256(SVM).hexdigest()}},
    }
    reg = data.registry()  # the cached dict every module reads: entries added for this test only
    for name, e in entries.items():
        _validate_entry(name, e)
        monkeypatch.setitem(reg, name, e)
    return reg


def test_obtain_downloads_parses_and_caches(registry, tmp_path):
    X, y = data.obtain("toy", cache_dir=tmp_path, lock=tmp_path / "l.lock", retries=1)
    np.testing.assert_array_equal(X, [[0.5, 0, 1], [0, 2, 0], [1.5, 0.5, -1], [0, 0, 0.25]])
    np.testing.assert_array_equal(y, [1, 0, 1, 0])
    assert (tmp_path / "raw" / "toy" / "ok.svm").exists()
    assert "toy/ok.svm.bz2" in LockFile(tmp_path / "l.lock").read()
    Handler.hits.clear()
    data.obtain("toy", cache_dir=tmp_path, retries=1)
    assert Handler.hits == {}  # served from the cache


def test_keel_regression_file_in_a_zip(registry, tmp_path):
    """The census-house route: KEEL's regression zip (header, real-valued output last)."""
    X, y = data.obtain("toy-keel-reg", cache_dir=tmp_path, retries=1)
    np.testing.assert_array_equal(X, [[120, 0.5], [33, 0.25], [7, 0.75]])
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, [41000, 150000.5, 99999])
    assert not leftovers(tmp_path)


def test_a_matlab_file_of_the_ssl_benchmark_layout(registry, tmp_path):
    """Chapelle et al.'s SSL benchmark files: X (here sparse, as Text's) and y in a .mat file."""
    X, y = data.obtain("toy-mat", cache_dir=tmp_path, retries=1)
    np.testing.assert_array_equal(X, [[0, 1.5, 0], [2, 0, 0], [0, 0, -1], [3, 0, 0.5]])
    np.testing.assert_array_equal(y, [1, 0, 1, 0])
    with pytest.raises(data.DataError, match=r"no variable 'X' or 'y' in the file \(it holds \['A'\]\)"):
        data.obtain("toy-mat-keys", cache_dir=tmp_path, retries=1)
    with pytest.raises(data.DataError, match="not a readable MATLAB file"):
        data.obtain("toy-mat-bad", cache_dir=tmp_path, retries=1)
    assert not leftovers(tmp_path)


def test_a_class_subset_keeps_the_source_split(registry, tmp_path):
    X, y, meta = data.obtain("toy-classes", cache_dir=tmp_path, retries=1, return_meta=True)
    np.testing.assert_array_equal(X[:, 0], [1, 3, 4, 5, 7, 8])  # classes 1 and 3, training file first
    np.testing.assert_array_equal(y, [0, 1, 0, 1, 1, 0])
    assert meta["n_train"] == 4


def test_source_split_uses_official_test_file(registry, tmp_path):
    X, y, meta = data.obtain("toy-split", cache_dir=tmp_path, retries=1, return_meta=True)
    assert meta["n_train"] == 4 and len(X) == 6
    sp = data.make_split("toy-split", 0, len(X), y, meta["n_train"])
    np.testing.assert_array_equal(sp["train"], [0, 1, 2, 3])
    np.testing.assert_array_equal(sp["test"], [4, 5])


@pytest.mark.parametrize("name,match", [
    ("toy-bad", r"malformed svmlight line 2: could not convert|malformed svmlight line 2"),
    ("toy-corrupt", r"corrupt or unreadable archive .* it was deleted, run again"),
    ("toy-gone", r"data set 'toy-gone': download failed: \S*/nothing: HTTP 404.*Offline alternative: .*'wisconsin'"),
    ("toy-shape", r"parsed shape \(4, 3\) differs from the registry's \(5, 3\)"),
])
def test_obtain_failures_give_one_clear_message_and_no_partial_files(registry, tmp_path, name, match):
    with pytest.raises(data.DataError, match=match):
        data.obtain(name, cache_dir=tmp_path, retries=1)
    assert not leftovers(tmp_path)
    if name == "toy-corrupt":
        assert not (tmp_path / "raw" / name / "corrupt.svm.bz2").exists()


def test_split_protocols_validation_and_semi_supervised():
    X, y = data.obtain("segment")
    sp = data.make_split("segment", 1, len(X), y, overrides={"validation_fraction": 0.25, "n_labeled": 14})
    tr, va, te = sp["train"], sp["validation"], sp["test"]
    assert not (set(tr) & set(va) or set(tr) & set(te) or set(va) & set(te))
    assert len(va) == round(0.25 * (len(tr) + len(va)))
    assert set(sp["labeled"]) <= set(tr) and len(sp["labeled"]) == 14
    assert np.all(np.bincount(y[sp["labeled"]]) == 2)  # 7 classes, spread evenly
    again = data.make_split("segment", 1, len(X), y, overrides={"validation_fraction": 0.25, "n_labeled": 14})
    np.testing.assert_array_equal(again["labeled"], sp["labeled"])


# -- the download cache: reused files are checked, a damaged one is made again once ----------------
TOY_X = [[0.5, 0, 1], [0, 2, 0], [1.5, 0.5, -1], [0, 0, 0.25]]


@pytest.fixture
def warnings_(caplog):
    caplog.set_level(logging.WARNING, logger="nystrom_bench.data")
    return caplog


@pytest.mark.parametrize("name,lock", [("toy-split", True), ("toy-sha", False)])
def test_a_cached_download_with_a_known_checksum_is_verified(registry, tmp_path, warnings_, name, lock):
    """Lock file (trust on first use) or registry sha256: a changed file of the same shape is caught."""
    lock = tmp_path / "l.lock" if lock else None
    X0, y0 = data.obtain(name, cache_dir=tmp_path, lock=lock, retries=1)
    raw = tmp_path / "raw" / name / "ok.svm"
    raw.write_bytes(SVM.replace(b"1:0.5", b"1:0.7"))  # parses fine, same shape: only the checksum tells
    Handler.hits.clear()
    X, y = data.obtain(name, cache_dir=tmp_path, lock=lock, retries=1)
    np.testing.assert_array_equal(X, X0)
    assert raw.read_bytes() == SVM and Handler.hits == {"/ok.svm": 1}
    assert f"{raw}: the cached download has SHA-256" in warnings_.text and "downloading it again" in warnings_.text
    Handler.hits.clear()
    data.obtain(name, cache_dir=tmp_path, lock=lock, retries=1)  # verified: reused, no warning
    assert Handler.hits == {}


@pytest.mark.parametrize("name,fname,plain", [("toy", "ok.svm.bz2", "ok.svm"), ("toy-keel-reg", "house.zip", "house")])
def test_a_truncated_cached_archive_is_downloaded_again(registry, tmp_path, warnings_, name, fname, plain):
    """The user's report: a truncated archive in resources/data ended in BadZipFile."""
    X0, _ = data.obtain(name, cache_dir=tmp_path, retries=1)
    raw = tmp_path / "raw" / name / fname
    good = raw.read_bytes()
    raw.write_bytes(good[: len(good) // 2])
    (tmp_path / "raw" / name / plain).unlink()
    Handler.hits.clear()
    X, _ = data.obtain(name, cache_dir=tmp_path, retries=1)
    np.testing.assert_array_equal(X, X0)
    assert raw.read_bytes() == good and Handler.hits == {f"/{fname}": 1}
    assert f"{raw}: the cached archive is corrupt or truncated" in warnings_.text
    assert not leftovers(tmp_path)


def test_an_archive_corrupt_in_the_cache_and_at_the_source_is_an_error(registry, tmp_path, warnings_):
    raw = tmp_path / "raw" / "toy-corrupt" / "corrupt.svm.bz2"
    raw.parent.mkdir(parents=True)
    raw.write_bytes(b"BZh9 truncated")
    Handler.hits.clear()
    with pytest.raises(data.DataError, match=r"corrupt or unreadable archive .*corrupt\.svm\.bz2.*downloaded twice.*"
                                              r"it was deleted, run again to re-download"):
        data.obtain("toy-corrupt", cache_dir=tmp_path, retries=1)
    assert Handler.hits == {"/corrupt.svm.bz2": 1} and not raw.exists() and not leftovers(tmp_path)
    assert "the cached archive is corrupt or truncated" in warnings_.text


@pytest.mark.parametrize("damage", [b"\x00\xff\xfe not svmlight at all\n", SVM[:-10]], ids=["garbage", "truncated"])
def test_a_damaged_decompressed_file_is_decompressed_again(registry, tmp_path, warnings_, damage):
    data.obtain("toy", cache_dir=tmp_path, retries=1)
    plain = tmp_path / "raw" / "toy" / "ok.svm"
    plain.write_bytes(damage)
    Handler.hits.clear()
    X, _ = data.obtain("toy", cache_dir=tmp_path, retries=1)
    np.testing.assert_array_equal(X, TOY_X)
    assert plain.read_bytes() == SVM and Handler.hits == {}  # made again from the cached archive
    assert str(plain) in warnings_.text and "again" in warnings_.text
    assert _mode(plain) & 0o644 == 0o644 and not leftovers(tmp_path)


def test_a_truncated_cached_download_without_checksum_is_downloaded_again(registry, tmp_path, warnings_):
    X0, y0, meta = data.obtain("toy-split", cache_dir=tmp_path, retries=1, return_meta=True)
    raw = tmp_path / "raw" / "toy-split" / "ok.svm"
    raw.write_bytes(SVM[:-10])  # one row less: parses, but the shape is wrong
    Handler.hits.clear()
    X, y, meta2 = data.obtain("toy-split", cache_dir=tmp_path, retries=1, return_meta=True)
    np.testing.assert_array_equal(X, X0)
    assert meta2 == meta == {"n_train": 4}
    assert Handler.hits == {"/ok.svm": 1, "/test.svm": 1} and raw.read_bytes() == SVM  # which one? both
    assert "parsed shape (5, 3) differs from the registry's (6, 3)" in warnings_.text and str(raw) in warnings_.text


@pytest.mark.parametrize("name,match", [
    ("toy-bad", r"malformed svmlight line 2.*bad\.svm was made again and still fails: delete .*raw/toy-bad/ "
                r"and run again"),
    ("toy-shape", r"parsed shape \(4, 3\) differs from the registry's \(5, 3\).*ok2\.svm.*: delete "
                  r".*raw/toy-shape/ and run again"),
])
def test_a_cached_file_that_fails_again_names_the_file_and_the_fix(registry, tmp_path, warnings_, name, match):
    with pytest.raises(data.DataError):
        data.obtain(name, cache_dir=tmp_path, retries=1)  # fresh download: no retry
    Handler.hits.clear()
    with pytest.raises(data.DataError, match=match):
        data.obtain(name, cache_dir=tmp_path, retries=1)  # cached: downloaded again once, still bad
    assert sum(Handler.hits.values()) == 1 and not leftovers(tmp_path)


def test_a_failed_first_download_leaves_no_empty_folders(registry, tmp_path):
    home = tmp_path / "fresh" / "home"
    with pytest.raises(data.DataError, match="Offline alternative: .*'wisconsin'"):
        data.obtain("toy-gone", cache_dir=home, retries=1)
    assert not (tmp_path / "fresh").exists()


def test_the_data_home_from_python(monkeypatch, tmp_path):
    from nystrom_bench.data.remote import default_cache_dir

    monkeypatch.setenv("NYSTROM_BENCH_DATA", str(tmp_path / "d"))
    assert default_cache_dir() == tmp_path / "d"
    monkeypatch.delenv("NYSTROM_BENCH_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c" / "nystrom_bench"


# -- one data cache: the command line, data.load and the workflow ----------------------------------


@pytest.fixture
def no_network(monkeypatch):
    """After this, any download attempt fails the test."""
    import urllib.request

    def refuse(*args, **kwargs):
        raise AssertionError("a download was attempted")

    return lambda: monkeypatch.setattr(urllib.request, "urlopen", refuse)


def test_fetched_with_the_command_line_then_loaded_and_obtained_without_network(
        registry, tmp_path, monkeypatch, capsys, no_network):
    from nystrom_bench import jobs

    cache = tmp_path / "cache"
    monkeypatch.setenv("NYSTROM_BENCH_DATA", str(cache))
    assert data.main(["fetch", "toy"]) == 0
    assert f"cached in {cache / 'raw' / 'toy'}" in capsys.readouterr().out
    assert (cache / "raw" / "toy" / "ok.svm.bz2").exists()
    no_network()
    split = data.load("toy", seed=0)  # no cache_dir: the same cache
    assert len(split.X_train) + len(split.X_test) == 4
    lock = tmp_path / "datasets.lock"
    jobs.obtain_dataset("toy", tmp_path / "resources" / "toy.npz", lock=lock)  # the workflow's obtain rule
    assert data.load_npz(tmp_path / "resources" / "toy.npz")["X"].shape == (4, 3)
    # fetched without the lock file: its checksum is recorded on the workflow's first use
    assert LockFile(lock).get("toy/ok.svm.bz2") == hashlib.sha256(bz2.compress(SVM)).hexdigest()
    assert data.main(["cache"]) == 0 and capsys.readouterr().out.strip() == str(cache)


def test_the_cache_precedence_argument_then_environment_then_xdg(registry, tmp_path, monkeypatch, capsys):
    from nystrom_bench.data.remote import default_cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("NYSTROM_BENCH_DATA", str(tmp_path / "env"))
    assert default_cache_dir(tmp_path / "arg") == tmp_path / "arg"
    assert default_cache_dir() == tmp_path / "env"
    data.obtain("toy-sha", retries=1)
    assert (tmp_path / "env" / "raw" / "toy-sha" / "ok.svm").exists()
    assert data.main(["fetch", "toy-sha", "--cache-dir", str(tmp_path / "arg"), "--npz", str(tmp_path / "t.npz")]) == 0
    assert (tmp_path / "arg" / "raw" / "toy-sha" / "ok.svm").exists()
    assert set(data.load_npz(tmp_path / "t.npz")) == {"X", "y", "n_train"}  # as the workflow writes it
    monkeypatch.delenv("NYSTROM_BENCH_DATA")
    data.obtain("toy-sha", retries=1)
    assert (tmp_path / "xdg" / "nystrom_bench" / "raw" / "toy-sha" / "ok.svm").exists()
    assert not (tmp_path / "xdg" / "nystrom_bench" / "raw" / "toy").exists()


def test_a_failed_download_names_the_url_once_the_cache_path_and_the_offline_copy(
        registry, tmp_path, monkeypatch, capsys):
    import nystrom_bench.data.download as download

    monkeypatch.setattr(download.time, "sleep", lambda seconds: None)  # no back-off waits in the test
    monkeypatch.setenv("NYSTROM_BENCH_DATA", str(tmp_path))
    Handler.hits.clear()
    assert data.main(["fetch", "toy-down"]) == 2
    msg = capsys.readouterr().err
    assert Handler.hits["/down"] == 3  # retried ...
    url = registry["toy-down"]["files"]["data"][0]
    assert msg.count(url) == 1 and "HTTP 503" in msg and "(3 tries)" in msg  # ... but named once
    assert msg.count("\n") == 1 and msg.startswith("error: data set 'toy-down': download failed")
    assert f"put the file at {tmp_path / 'raw' / 'toy-down' / 'down'}" in msg
    assert "Offline alternative: the embedded copy 'wisconsin'" in msg
    with pytest.raises(data.DataError, match="Offline alternative: none for this set; .* list"):
        data.obtain("toy-gone-nothing-offline", cache_dir=tmp_path, retries=1)


def test_every_offline_copy_needs_no_download_and_housing_names_boston():
    from nystrom_bench.data.remote import _offline_hint

    reg = data.registry()
    for name, e in reg.items():
        if e.get("offline"):
            assert reg[e["offline"]]["source"].partition(":")[0] not in ("url", "none"), name
            assert reg[e["offline"]]["shape"][0] == e["shape"][0], name
    assert "'boston'" in _offline_hint(data.info("housing"))
