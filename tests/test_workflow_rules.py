"""Does the workflow test (tests/test_workflow.py, its tiny config TINY) evaluate every verdict rule?

A claim gets a tested verdict only where one of its ``study:`` blocks ran, its ``datasets:`` (if any) are
among that block's and -- for a rule comparing methods -- ``a`` and its rivals are among the block's
methods; else the ledger says ``not run`` / ``not testable``.  This reads that off TINY and the paper files
without running Snakemake (the workflow run, a session fixture of test_workflow.py, is not needed for it);
:func:`rules_with_a_verdict` does the same on a real ledger, for test_workflow.py to call on ``results/claims.csv``.

Today TINY's block names are the ``*_tiny`` ones, which no claim names, so only ``better`` and
``no_worse`` (the krr and krc claims) are evaluated: the coverage test is an expected failure until the
config (or the claims' study lists) change -- see its reason.
"""


from test_workflow import TINY

from nystrom_bench import claims, papers

UNTESTED = {"not run", "not testable"}


def rules_with_a_verdict(ledger, all_claims=None):
    """The rules with at least one claim whose verdict in ``ledger`` (a claims.csv table) is a tested one."""
    rule = {c["id"]: c.get("rule") for c in (all_claims or papers.all_claims()) if not c.get("not_testable")}
    return {rule[i] for i, v in zip(ledger["claim_id"], ledger["verdict"], strict=True)
            if i in rule and v not in UNTESTED}


def _as_list(v):
    return list(v) if isinstance(v, list | tuple) else [] if v is None else [v]


def predicted(config=TINY):
    """``{rule: [claim ids]}`` that the config can evaluate (the static reading described above)."""
    blocks = config["studies"]
    out = {r: [] for r in claims.RULES}
    for c in papers.all_claims():
        if c.get("not_testable"):
            continue
        ran = [b for b in _as_list(c["study"]) if b in blocks]
        if not ran:
            continue  # not run
        block = blocks[ran[0]]
        if c.get("datasets") and not set(c["datasets"]) & set(block["datasets"]):
            continue  # not testable: its data sets are not in the results
        if c.get("column", "method") == "method" and c.get("a") is not None:
            if not {c["a"], *_as_list(c.get("b"))} <= set(block["methods"]):
                continue
        out[c["rule"]].append(c["id"])
    return out


def test_tested_rules_reads_a_ledger():
    import pandas as pd

    cl = [{"id": "x", "rule": "better"}, {"id": "y", "rule": "equivalent"}, {"id": "z", "not_testable": "no"}]
    led = pd.DataFrame({"claim_id": ["x", "y", "z"], "verdict": ["partly reproduced", "not run", "not testable"]})
    assert rules_with_a_verdict(led, cl) == {"better"}


def test_the_tiny_config_evaluates_better_and_no_worse():
    got = predicted()
    assert got["better"] and got["no_worse"]


def test_every_rule_is_evaluated_by_the_workflow_test():
    got = predicted()
    assert not [r for r, ids in got.items() if not ids], {r: len(ids) for r, ids in got.items()}
