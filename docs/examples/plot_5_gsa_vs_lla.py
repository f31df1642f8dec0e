"""
GSA, LLA or NCR: how to use the approximation
=============================================

Li et al. (*Geometric interpretation of running Nyström-based kernel machines*) distinguish three
ways to run a kernel machine on a Nyström approximation: GSA (train on K~, predict with the exact
kernel), LLA (ridge on the Nyström features, train and predict on K~) and NCR (Rudi et al.'s
computational regularisation, equal to LLA for KRR). ``KRR(mode=...)`` runs each, and
:func:`nystrom_bench.integration.approximation_error` measures how far each solution is from the
exact machine's in the RKHS, ``||w* - w|| / ||w*||``.
"""

import matplotlib.pyplot as plt

from nystrom_bench import data, integration, learners

split = data.load("friedman1", seed=0)
alphas = [1e-3, 1e-2, 1e-1, 1.0, 10.0]
common = dict(gamma=0.1, n_components=50, random_state=0, fit_intercept=False)

# %%
results = {mode: [] for mode in ("gsa", "lla", "ncr")}
for alpha in alphas:
    exact = learners.KRR(approximation="exact", alpha=alpha, gamma=0.1, fit_intercept=False)
    exact.fit(split.X_train, split.y_train)
    for mode in results:
        model = learners.KRR(alpha=alpha, mode=mode, **common).fit(split.X_train, split.y_train)
        err = integration.approximation_error(exact, model, mode=mode)
        results[mode].append((model.score(split.X_test, split.y_test), err))
    print(f"alpha = {alpha:g}: " + ", ".join(
        f"{m} R^2 {results[m][-1][0]:.3f} / RKHS error {results[m][-1][1]:.3f}" for m in results))

# %%
# GSA's coefficients explode for small alpha (its solution is far from the exact one, and its test
# score collapses); LLA and NCR coincide.
fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
for mode, rows in results.items():
    axes[0].plot(alphas, [r[0] for r in rows], "o-", label=mode)
    axes[1].plot(alphas, [r[1] for r in rows], "o-", label=mode)
axes[0].set_ylim(-1, 1)
axes[0].set_ylabel("test $R^2$")
axes[1].set_ylabel("relative RKHS error")
axes[1].set_yscale("log")
for ax in axes:
    ax.set_xscale("log")
    ax.set_xlabel(r"ridge $\alpha$")
axes[0].legend()
fig.tight_layout()
