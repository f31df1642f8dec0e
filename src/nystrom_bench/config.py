"""Checks a workflow config beyond its JSON schema: names, pairings, method blocks.

``check(config)`` raises :class:`ConfigError` with one message that names the
offending key and the allowed values, so a bad config stops the workflow before
any job runs.
"""

from __future__ import annotations

__all__ = ["ConfigError", "check", "enabled_studies", "datasets_of", "all_seeds"]


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


def check(config):
    """Validate names and pairings of every enabled study; return the enabled studies."""
    from . import data, kernels, studies

    known_kinds = studies.available()
    known_data = data.available()
    if not enabled_studies(config):
        raise ConfigError("config: no enabled study under 'studies'; enable at least one")
    for sname, block in enabled_studies(config).items():
        where = f"studies.{sname}"
        kind = block.get("kind", sname)
        if kind not in known_kinds:
            raise ConfigError(f"{where}.kind: unknown study kind {kind!r}; choose one of {', '.join(known_kinds)}")
        study = studies.get(kind)
        for ds in block["datasets"]:
            if ds not in known_data:
                raise ConfigError(
                    f"{where}.datasets: unknown data set {ds!r}; choose one of {', '.join(known_data)} "
                    "(see `python -m nystrom_bench.data list`)"
                )
            try:
                data.check_available(ds)
            except data.DataError as exc:
                raise ConfigError(f"{where}.datasets: {exc}") from None
        try:
            study.check_params(block.get("params") or {})
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}.params: {exc}") from None
        for klabel, kspec in block["kernels"].items():
            kname = kspec.get("kernel", klabel)
            if kname not in kernels.available():
                raise ConfigError(
                    f"{where}.kernels.{klabel}: unknown kernel {kname!r}; choose one of {', '.join(kernels.available())}"
                )
            kspec.setdefault("kernel", kname)
        for mname, mcfg in block["methods"].items():
            try:
                study.check_method(mname, mcfg or {}, block)
            except (ValueError, TypeError) as exc:
                raise ConfigError(f"{where}.methods.{mname}: {exc}") from None
            for ds in block["datasets"]:
                reason = study.skip(data.info(ds), mname, mcfg)
                if reason:
                    raise ConfigError(f"{where}: cannot run method {mname!r} on {ds!r}: {reason}")
        ref = block.get("reference", study.reference_method)
        labels = study.result_methods(block)
        if ref is not None and ref not in labels:
            raise ConfigError(
                f"{where}.reference: the reference method {ref!r} is not among the methods "
                f"{', '.join(labels)}; add it or set 'reference:'"
            )
    return enabled_studies(config)
