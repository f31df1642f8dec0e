"""Compare two SQLite MLflow stores run by run (issue 38, item 2: MLflow holds the same runs after a
change of nystrom_bench.tracking): the same experiments (tags), and per run -- matched by identity:
``run_key`` for configuration runs, ``job_key`` for job runs, the name otherwise -- the same status,
name, params, tags, metric histories (key, value, step), dataset inputs (name, digest, source,
schema, context) and artifact files (bytes).  Ids, times and paths that contain them are left out.

    python benchmarks/tracking_compare.py <store A dir> <store B dir>

Each dir holds ``mlflow.db`` and ``mlartifacts/``.  Prints one line per difference (at most 20 per
kind) and a summary; exits 1 if anything differs.
"""

import hashlib
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

VOLATILE_TAGS = {"mlflow.user", "mlflow.source.name", "mlflow.source.type", "mlflow.source.git.commit"}


def _rows(con, sql):
    return con.execute(sql).fetchall()


def load(store):
    """``{experiment: {"tags": {...}, "runs": {identity: {...}}}}`` of one store."""
    store = Path(store)
    con = sqlite3.connect(f"file:{store / 'mlflow.db'}?mode=ro", uri=True)
    exps = {eid: name for eid, name in _rows(con, "select experiment_id, name from experiments "
                                                  "where lifecycle_stage = 'active'")}
    out = {name: {"tags": {}, "runs": {}} for name in exps.values()}
    for eid, key, value in _rows(con, "select experiment_id, key, value from experiment_tags"):
        if eid in exps:
            out[exps[eid]]["tags"][key] = value
    tags, params, metrics, inputs = (defaultdict(dict), defaultdict(dict), defaultdict(list), defaultdict(list))
    for rid, key, value in _rows(con, "select run_uuid, key, value from tags"):
        tags[rid][key] = value
    for rid, key, value in _rows(con, "select run_uuid, key, value from params"):
        params[rid][key] = value
    for rid, key, value, step, is_nan in _rows(con, "select run_uuid, key, value, step, is_nan from metrics"):
        metrics[rid].append((key, "nan" if is_nan else repr(float(value)), int(step)))
    input_tags = defaultdict(dict)
    for iid, key, value in _rows(con, "select input_uuid, name, value from input_tags"):
        input_tags[iid][key] = value
    for iid, rid, name, digest, source, schema in _rows(
            con, "select i.input_uuid, i.destination_id, d.name, d.digest, d.dataset_source, d.dataset_schema "
                 "from inputs i join datasets d on i.source_id = d.dataset_uuid "
                 "where i.destination_type = 'RUN' and i.source_type = 'DATASET'"):
        inputs[rid].append((name, digest, source, schema, tuple(sorted(input_tags[iid].items()))))
    for rid, eid, name, status, artifact_uri in _rows(
            con, "select run_uuid, experiment_id, name, status, artifact_uri from runs "
                 "where lifecycle_stage = 'active'"):
        if eid not in exps:
            continue
        t = {k: v for k, v in tags[rid].items() if k not in VOLATILE_TAGS}
        level = t.get("nystrom_bench.level", "")
        ident = (level, t.get("run_key") or (t.get("job_key") if level == "job" else None) or name)
        art = Path(artifact_uri.removeprefix("file://"))
        files = {}
        if art.exists():
            files = {str(p.relative_to(art)): hashlib.sha256(p.read_bytes()).hexdigest()[:16]
                     for p in sorted(art.rglob("*")) if p.is_file()}
        runs = out[exps[eid]]["runs"]
        if ident in runs:
            ident = (*ident, rid)  # a duplicate: reported as an extra run
        runs[ident] = {"name": name, "status": status, "tags": t, "params": params[rid],
                       "metrics": sorted(metrics[rid]), "inputs": sorted(inputs[rid]), "artifacts": files}
    return out


def compare(a, b):
    """Differences as ``(kind, text)``."""
    diffs = []
    for exp in sorted(set(a) | set(b)):
        if exp not in a or exp not in b:
            diffs.append(("experiment", f"{exp}: only in {'A' if exp in a else 'B'}"))
            continue
        if a[exp]["tags"] != b[exp]["tags"]:
            keys = {k for k in set(a[exp]["tags"]) | set(b[exp]["tags"])
                    if a[exp]["tags"].get(k) != b[exp]["tags"].get(k)}
            diffs.append(("experiment tags", f"{exp}: {sorted(keys)}"))
        ra, rb = a[exp]["runs"], b[exp]["runs"]
        for ident in sorted(set(ra) | set(rb), key=str):
            if ident not in ra or ident not in rb:
                diffs.append(("run", f"{exp} {ident}: only in {'A' if ident in ra else 'B'}"))
                continue
            for field in ("name", "status", "tags", "params", "metrics", "inputs", "artifacts"):
                x, y = ra[ident][field], rb[ident][field]
                if x != y:
                    if isinstance(x, dict):
                        keys = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
                        diffs.append((field, f"{exp} {ident}: {keys[:5]} ({len(keys)} keys)"))
                    else:
                        diffs.append((field, f"{exp} {ident}: {sorted(set(x) ^ set(y))[:3]}"))
    return diffs


def main(argv):
    a, b = load(argv[0]), load(argv[1])
    diffs = compare(a, b)
    by_kind = defaultdict(list)
    for kind, text in diffs:
        by_kind[kind].append(text)
    for kind, texts in by_kind.items():
        for text in texts[:20]:
            print(f"{kind}: {text}")
    n_runs = sum(len(e["runs"]) for e in a.values())
    n_metrics = sum(len(r["metrics"]) for e in a.values() for r in e["runs"].values())
    print(f"A: {len(a)} experiments, {n_runs} runs, {n_metrics} metric points; "
          f"B: {len(b)} experiments, {sum(len(e['runs']) for e in b.values())} runs; "
          f"differences: {len(diffs)} ({', '.join(f'{k} {len(v)}' for k, v in by_kind.items()) or 'none'})")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
