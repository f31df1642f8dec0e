"""Atomic writes: modes readable by others, nothing half-written, leftovers of killed writers cleaned."""

import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from nystrom_bench import atomic


@pytest.fixture
def umask022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_modes_follow_the_umask(tmp_path, umask022):
    with atomic.open_atomic(tmp_path / "f.txt", "w") as fh:
        fh.write("x")
    atomic.replace_into(tmp_path / "g.bin", lambda p: open(p, "wb").write(b"y"))
    with atomic.atomic_dir(tmp_path / "d") as d:
        (d / "inner.txt").write_text("z")
    assert stat.S_IMODE((tmp_path / "f.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "g.bin").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == 0o755
    assert (tmp_path / "d" / "inner.txt").read_text() == "z"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "f.txt", "g.bin"]


def test_failure_leaves_the_old_output_and_no_temporary(tmp_path):
    (tmp_path / "f.txt").write_text("old")
    with pytest.raises(RuntimeError), atomic.open_atomic(tmp_path / "f.txt", "w") as fh:
        fh.write("half")
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError), atomic.atomic_dir(tmp_path / "d"):
        raise RuntimeError("boom")
    assert (tmp_path / "f.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


KILLED_WRITER = """
import sys, time
from pathlib import Path
from nystrom_bench import atomic
with atomic.atomic_dir(sys.argv[1]) as d:
    (d / "a.png").write_bytes(b"x" * 1000)
    print("writing", flush=True)
    time.sleep(60)
"""


def test_a_killed_writer_leaves_nothing_after_the_next_write(tmp_path):
    target = tmp_path / "figures"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".figures.")]
    assert len(leftovers) == 1 and not target.exists()  # what a kill leaves behind ...
    with atomic.atomic_dir(target) as d:  # ... the resumed run removes
        (d / "b.png").write_bytes(b"y")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figures"]


def test_a_live_writers_temporary_is_left_alone(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(tmp_path / "figures")],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
        assert atomic.clean_leftovers(tmp_path / "figures") == []
    finally:
        proc.kill()
        proc.wait()
    time.sleep(0.05)
    assert len(atomic.clean_leftovers(tmp_path / "figures")) == 1
