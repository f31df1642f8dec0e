"""The streamed-product loops of :mod:`nystrom_bench._fastexp_numba` are compiled on first lookup, not at import."""

import subprocess
import sys

import pytest

pytest.importorskip("numba")

_PROBE = """
import nystrom_bench._fastexp_numba as nb
streamed = list(nb._STREAMED)
print(sorted(n for n in streamed if n in vars(nb)))
tile = nb.gram_tile_f64
print(sorted(n for n in streamed if n not in vars(nb)), len(tile.overloads), len(nb._dot4.overloads))
try:
    nb.no_such_loop
except AttributeError as exc:
    print("AttributeError", "no_such_loop" in str(exc))
"""


def test_streamed_loops_compile_on_first_lookup():
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"  # none at import
    assert out[1] == "[] 1 2"  # all after one lookup, each with its signatures
    assert out[2] == "AttributeError True"
