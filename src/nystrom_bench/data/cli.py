"""Command line: ``python -m nystrom_bench.data list | info NAME | fetch NAME --dest DIR``
(also the ``nystrom-bench-data`` console script)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import yaml

from .catalog import available, info
from .errors import DataError
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
    p_fetch = sub.add_parser("fetch", help="obtain a data set and write it as .npz")
    p_fetch.add_argument("name")
    p_fetch.add_argument("--dest", default="resources/data")
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
        else:
            X, y = obtain(args.name, cache_dir=args.dest)
            out = Path(args.dest) / f"{args.name}.npz"
            save_npz_atomic(out, X=X, y=y)
            print(f"{args.name}: {X.shape[0]} x {X.shape[1]} -> {out}")
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `... list | head`: the reader went away; not an error
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's flush at exit
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
