"""Command line: ``python -m nystrom_bench.data list | info NAME | fetch NAME | cache``
(also the ``nystrom-bench-data`` console script).

``fetch`` fills the one data cache that ``data.load`` and the workflow read
(:func:`~nystrom_bench.data.default_cache_dir`: ``--cache-dir``, else ``$NYSTROM_BENCH_DATA``, else
``$XDG_CACHE_HOME/nystrom_bench``); ``--npz FILE`` also writes the arrays."""

from __future__ import annotations

import argparse
import os
import sys

import yaml

from .catalog import available, info
from .errors import DataError
from .remote import CACHE_ENV, default_cache_dir
from .sources import obtain
from .store import save_npz_atomic

__all__ = ["main"]

DESCRIPTION = "Data sets: registry, embedded, synthetic and downloaded sources, splits, preprocessing."


def main(argv=None):
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m nystrom_bench.data", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="list every registered data set")
    p_info = sub.add_parser("info", help="show one data set's registry entry")
    p_info.add_argument("name")
    p_fetch = sub.add_parser("fetch", help="download a data set ahead into the data cache (the one data.load "
                             "and the workflow read) and check it")
    p_fetch.add_argument("name")
    p_fetch.add_argument("--cache-dir", default=None, help=f"the data cache (default: ${CACHE_ENV}, else "
                         "$XDG_CACHE_HOME/nystrom_bench)")
    p_fetch.add_argument("--npz", default=None, metavar="FILE", help="also write X, y (and the source's "
                         "training rows, n_train) to this .npz file")
    p_fetch.add_argument("--lock", default=None, metavar="FILE", help="checksum lock file to verify against "
                         "and record in (the workflow's: config/datasets.lock)")
    p_fetch.add_argument("--dest", default=None, help=argparse.SUPPRESS)  # deprecated: --cache-dir DIR --npz DIR/NAME.npz
    sub.add_parser("cache", help="print the data cache directory")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "list":
            rows = []
            for name in available():
                e = info(name)
                kind = e["source"].split(":")[0]
                offline = {"url": "no", "none": "-"}.get(kind, "yes")
                note = e.get("unavailable") or (f"offline mirror: {e['offline']}" if e.get("offline") else "") \
                    or e.get("mirror_of", "")
                src = e["source"] if kind != "url" else f"url ({e['format']})"
                rows.append((name, e["task"], str(e["shape"][0]), str(e["shape"][1]), src, offline, note))
            head = ("name", "task", "n", "d", "source", "offline", "note")
            widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
            right = {2, 3}  # numbers right-aligned; every column at least two spaces from the next
            for r in [head, *rows]:
                cells = [r[i].rjust(w) if i in right else r[i].ljust(w) for i, w in enumerate(widths)]
                print("  ".join(cells) + "  " + r[-1])
        elif args.cmd == "info":
            print(yaml.safe_dump(info(args.name), sort_keys=False).rstrip())
        elif args.cmd == "cache":
            print(default_cache_dir())
        else:
            if args.dest:
                print(f"note: --dest is deprecated; it stands for --cache-dir {args.dest} "
                      f"--npz {args.dest}/{args.name}.npz", file=sys.stderr)
                args.cache_dir = args.cache_dir or args.dest
                args.npz = args.npz or f"{args.dest}/{args.name}.npz"
            cache = default_cache_dir(args.cache_dir)
            X, y, meta = obtain(args.name, cache_dir=cache, lock=args.lock, return_meta=True)
            kind = info(args.name)["source"].split(":")[0]
            where = f"cached in {cache / 'raw' / args.name}" if kind == "url" else f"{kind} source, no download needed"
            print(f"{args.name}: {X.shape[0]} x {X.shape[1]}, {where}")
            if args.npz:
                n_train = -1 if meta["n_train"] is None else meta["n_train"]
                save_npz_atomic(args.npz, X=X, y=y, n_train=n_train)
                print(f"{args.name}: arrays written to {args.npz}")
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `... list | head`: the reader went away; not an error
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's flush at exit
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
