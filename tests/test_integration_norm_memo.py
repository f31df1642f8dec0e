"""``approximation_error`` keeps the exact machine's ``||w*||^2`` while its expansion is unchanged: the same bits as
computing it afresh, and a refit exact machine gets its new norm (no stale value)."""

import numpy as np

from nystrom_bench import integration
from nystrom_bench.learners import KRR


def _fresh(exact, approx):
    integration._EXACT_NORMS.clear()
    return integration.approximation_error(exact, approx)


def test_memo_gives_the_fresh_value_and_follows_a_refit():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(150, 3)), rng.normal(size=150)
    exact = KRR(gamma=0.5, alpha=1e-2, approximation="exact", fit_intercept=False).fit(X, y)
    models = [KRR(gamma=0.5, alpha=1e-2, n_components=c, mode=mode, random_state=0, fit_intercept=False).fit(X, y)
              for c in (10, 30) for mode in ("gsa", "lla")]
    fresh = [_fresh(exact, m) for m in models]
    integration._EXACT_NORMS.clear()
    memo = [integration.approximation_error(exact, m) for m in models]  # the first computes, the rest reuse
    assert [np.float64(v).tobytes() for v in memo] == [np.float64(v).tobytes() for v in fresh]
    # the textbook value: a*^T K a* with the dense kernel matrix, relative distance of a GSA model
    K = exact.kernel_(X)
    a_star = exact.dual_coef_.ravel()
    d = a_star - models[0].dual_coef_.ravel()
    np.testing.assert_allclose(memo[0], np.sqrt(d @ K @ d / (a_star @ K @ a_star)), rtol=1e-9)
    # refit on other targets: the memo must not answer with the old norm
    y2 = 3 * y + 1
    exact.fit(X, y2)
    refit = [KRR(gamma=0.5, alpha=1e-2, n_components=10, mode="gsa", random_state=0, fit_intercept=False).fit(X, y2)]
    got = integration.approximation_error(exact, refit[0])
    assert np.float64(got).tobytes() == np.float64(_fresh(exact, refit[0])).tobytes()
    a2 = exact.dual_coef_.ravel()
    d2 = a2 - refit[0].dual_coef_.ravel()
    np.testing.assert_allclose(got, np.sqrt(d2 @ K @ d2 / (a2 @ K @ a2)), rtol=1e-9)
