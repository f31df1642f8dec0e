"""Checks a workflow config beyond its JSON schema, before any job runs.

``check(config)`` raises :class:`ConfigError` with one message that names the
offending key and the fix, so a bad config stops the workflow before the first
job: unknown names (study kind, data set, kernel, sampler), kernel values
(``gamma: 0``, ``gamma: medain``, a key the kernel or the study does not take),
study parameters (unknown keys, bad grids, ``alpha: -1``), method blocks (by the
estimator's own parameter validation), invalid method x data set pairings,
landmark counts larger than a data set's training part, and the reference method.
"""

from __future__ import annotations

__all__ = ["ConfigError", "check", "enabled_studies", "datasets_of", "all_seeds", "workflow_schema", "schema_error"]


class ConfigError(ValueError):
    """A user-fixable error in the workflow config."""


def enabled_studies(config):
    """``{name: block}`` of the studies with ``enabled`` not false."""
    return {k: v for k, v in config.get("studies", {}).items() if v.get("enabled", True)}


def datasets_of(config):
    """Every data set used by an enabled study (sorted)."""
    return sorted({d for s in enabled_studies(config).values() for d in s["datasets"]})


def all_seeds(config, dataset):
    """Union of the seeds of the enabled studies that use ``dataset`` (sorted)."""
    return sorted({int(x) for s in enabled_studies(config).values() if dataset in s["datasets"] for x in s["seeds"]})


def _check_block(study, block, known_kinds, known_data):
    from . import data, studies
    from .tracking import FINDINGS_EXPERIMENT

    where = f"studies.{study}"
    if study == FINDINGS_EXPERIMENT:
        raise ConfigError(f"{where}: the name {study!r} is the MLflow experiment of the findings; rename the study")
    kind_name = block.get("kind", study)
    if kind_name not in known_kinds:
        raise ConfigError(f"{where}.kind: unknown study kind {kind_name!r}; choose one of {', '.join(known_kinds)}")
    kind = studies.get(kind_name)
    for ds in block["datasets"]:
        if ds not in known_data:
            raise ConfigError(f"{where}.datasets: unknown data set {ds!r}; choose one of {', '.join(known_data)} "
                              "(see `python -m nystrom_bench.data list`)")
        try:
            data.check_available(ds)
        except data.DataError as exc:
            raise ConfigError(f"{where}.datasets: {exc}") from None
    for ds in block["datasets"] if block.get("split") else []:
        try:
            data.train_size(ds, block["split"])
        except data.DataError as exc:
            raise ConfigError(f"{where}.split: {exc}; change the block's split: overrides") from None
    params = block.get("params") or {}
    try:
        kind.check_params(params)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}.params: {exc}") from None
    params = kind.resolve_params(params)
    for klabel, kspec in block["kernels"].items():
        kspec = dict(kspec or {})
        kspec.setdefault("kernel", klabel)
        try:
            block["kernels"][klabel] = _check_kernel(kind, klabel, kspec)
        except ValueError as exc:
            raise ConfigError(f"{where}.{exc}") from None
    for mname, mcfg in block["methods"].items():
        mcfg = block["methods"][mname] = mcfg or {}
        try:
            method = kind.method(mname, mcfg)
            method.check(params, block)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}.methods.{mname}: {exc}") from None
        counts = [*kind.landmark_counts(params), *method.landmark_counts(params)]
        for ds in block["datasets"]:
            info = data.info(ds)
            reason = (f"study kind {kind.name!r} needs a {'/'.join(kind.tasks)} data set, {ds!r} is {info['task']}"
                      if info["task"] not in kind.tasks else method.skip(info, params))
            if reason:
                raise ConfigError(f"{where}: cannot run method {mname!r} on {ds!r}: {reason}")
            n_train = data.train_size(ds, block.get("split"))  # the split was checked above
            problem = kind.check_data(params, ds, n_train)
            if problem:
                raise ConfigError(f"{where}.params: {problem}")
            too_many = [m for m in counts if n_train is not None and m > n_train]
            if too_many:
                raise ConfigError(
                    f"{where}.methods.{mname}: {max(too_many)} landmarks, but {ds!r} has only {n_train} training "
                    f"points; use at most {n_train} landmarks (a method's n_components, a gnkr block's "
                    f"params.n_components) or a larger data set")
    ref = block.get("reference", kind.reference_method)
    if ref is not None and ref not in block["methods"]:
        hint = ""
        if str(ref).rpartition("-")[0] in block["methods"]:  # the old 'US-1000' labels
            hint = (f" (coords such as m are no longer part of method labels: use {str(ref).rpartition('-')[0]!r}; "
                    "the tests then run at every coord value)")
        raise ConfigError(f"{where}.reference: the reference method {ref!r} is not among the methods "
                          f"{', '.join(block['methods'])}; add it or set 'reference:'{hint}")


def _check_kernel(kind, label, spec):
    """A normalised kernel spec, or ValueError: unknown kernel, bad value, or a key the study does not honour."""
    from . import kernels

    where = f"kernels.{label}"
    spec = kernels.check_spec(spec, where=where)
    if kind.kernel_names is not None and spec["kernel"] not in kind.kernel_names:
        raise ValueError(f"{where}: study kind {kind.name!r} supports the kernels "
                         f"{', '.join(kind.kernel_names)}, not {spec['kernel']!r}")
    if kind.kernel_keys is not None:
        ignored = sorted(set(spec) - {"kernel", *kind.kernel_keys})
        if ignored:
            allowed = ", ".join(kind.kernel_keys) or "none besides 'kernel'"
            raise ValueError(f"{where}: key(s) {', '.join(map(repr, ignored))} are not used by study kind "
                             f"{kind.name!r} (it honours: {allowed}){kind.kernel_keys_note}; remove them")
    return spec


def check(config):
    """Validate names, values and pairings of every enabled study; return the enabled studies.

    Kernel blocks are normalised in place (``kernel:`` filled in from the label).
    """
    from . import data, studies

    known_kinds = studies.available()
    known_data = data.available()
    if not enabled_studies(config):
        raise ConfigError("config: no enabled study under 'studies'; enable at least one")
    for study, block in enabled_studies(config).items():
        _check_block(study, block, known_kinds, known_data)
    return enabled_studies(config)


def schema_error(exc):
    """One line for a config that fails ``config/schema.yaml``: where, what, and the fix.

    ``exc`` is what Snakemake's ``validate`` raised (a ``WorkflowError`` holding jsonschema's
    ``ValidationError``) or the ``ValidationError`` itself; jsonschema's own text appends the whole schema
    fragment (dozens of lines for a study block), so only its message and the offending key's path are
    kept.  Anything else comes back as ``str(exc)``.
    """
    import jsonschema

    errors, e = [], exc  # Snakemake's WorkflowError keeps jsonschema's error as the one it was raised in
    while e is not None and len(errors) < 10:
        errors.append(e)
        e = e.__cause__ or e.__context__
    error = next((e for e in errors if isinstance(e, jsonschema.ValidationError)), None)
    if error is None:
        return str(exc)
    error = jsonschema.exceptions.best_match([error]) if not error.context else jsonschema.exceptions.best_match(
        error.context)
    where = ".".join(str(p) for p in error.absolute_path) or "the config's top level"
    return (f"invalid config: {where}: {error.message}; fix it in the config file (the allowed keys and values: "
            "config/schema.yaml, docs/guide/configuration.md)")


def _params_schema(kind):
    """The JSON schema of a study kind's ``params:`` block, from its ``params_schema`` (defaults go into the
    descriptions: Snakemake's ``validate`` would otherwise write them into the config, changing every job)."""
    if kind.params_schema is None:
        return {"type": "object", "description": f"the parameters of study kind {kind.name!r}"}
    props = {}
    for key, spec in kind.params_schema.items():
        spec = dict(spec)
        if "default" in spec:
            default = spec.pop("default")
            spec["description"] = (spec.get("description", "") + f" (default: {default!r})").strip()
        props[key] = spec
    for old, new in kind.renamed_params.items():  # through to check(), whose message names the new key
        props[old] = {"description": f"renamed {new!r} (the check before any job stops with a message that says so)"}
    return {"type": "object", "additionalProperties": False, "properties": props,
            "description": f"the parameters of study kind {kind.name!r}"}


def workflow_schema(base):
    """The workflow's JSON schema (``config/schema.yaml``) with every study kind's ``params:`` in it.

    ``base`` is the schema as loaded; its generic study block becomes ``$defs.block``, each kind's
    parameters ``$defs.params_<kind>``, chosen by the block's ``kind`` (or, without one, by a block
    named after a kind).  ``python -m nystrom_bench.config schema`` rewrites the file; a test keeps
    the file and the study kinds in step.
    """
    import copy

    from . import studies

    out = copy.deepcopy(base)
    defs = out.setdefault("$defs", {})
    studies_schema = out["properties"]["studies"]
    block = defs.get("block") or studies_schema["additionalProperties"]
    block = {k: v for k, v in block.items() if k != "allOf"}
    # the package's kinds (a kind registered from outside it, e.g. in a test, is not the workflow's)
    kinds = [k for k in studies.available() if type(studies.get(k)).__module__.startswith(studies.__name__ + ".")]
    block["allOf"] = [{"if": {"required": ["kind"], "properties": {"kind": {"const": k}}},
                       "then": {"properties": {"params": {"$ref": f"#/$defs/params_{k}"}}}} for k in kinds]
    block["properties"]["kind"] = {"enum": kinds, "description": "study kind (nystrom_bench.studies); defaults to "
                                   "the block's name"}
    defs["block"] = block
    for k in kinds:
        defs[f"params_{k}"] = _params_schema(studies.get(k))
    studies_schema["additionalProperties"] = {"$ref": "#/$defs/block"}
    studies_schema["properties"] = {
        k: {"allOf": [{"$ref": "#/$defs/block"},
                      {"if": {"not": {"required": ["kind"]}},
                       "then": {"properties": {"params": {"$ref": f"#/$defs/params_{k}"}}}}]} for k in kinds}
    return out


def _main(argv=None):
    import argparse
    from pathlib import Path

    import yaml

    ap = argparse.ArgumentParser(prog="python -m nystrom_bench.config")
    ap.add_argument("command", choices=["schema"], help="schema: write every study kind's params into the schema")
    ap.add_argument("--path", default="config/schema.yaml")
    args = ap.parse_args(argv)
    path = Path(args.path)
    text = yaml.safe_dump(workflow_schema(yaml.safe_load(path.read_text())), sort_keys=False, width=110)
    from .atomic import open_atomic

    with open_atomic(path, "w") as fh:
        fh.write("# Generated in part: `python -m nystrom_bench.config schema` writes each study kind's params\n"
                 "# ($defs.params_<kind>) from the kinds' params_schema; edit the rest by hand.\n" + text)
    print(f"wrote {path}")


if __name__ == "__main__":
    _main()
