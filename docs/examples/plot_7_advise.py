"""
Advice on your own data: ``nystrom-bench advise``
=================================================

Which sampler, how many landmarks, which width and ridge, exact or Nyström -- for *this* data, within
a time budget? :func:`nystrom_bench.advise.advise` runs a paired mini-study: widths, ``alpha`` and
standardisation at the default 200 landmarks, then the landmark count doubled while it gains, with
every sampler at each count, on three hold-out blocks; then the selected model against the default
``KRR()`` on ten-fold blocks it never saw. It recommends the model only where it is significantly
better (Wilcoxon's signed-rank test on the folds' log error ratios); otherwise the answer is "keep the
default". From the shell: ``nystrom-bench advise data.csv --target y --budget 120 --json a.json
--report a.html``.

Here: a blob with 25 tiny, distant clusters, each with its own target level. Uniform landmarks miss
about half of the tiny clusters; the samplers that look at the kernel do not.
"""

import matplotlib.pyplot as plt
import numpy as np

from nystrom_bench.advise import advise
from nystrom_bench.learners import KRR

rng = np.random.default_rng(0)
big = rng.normal(size=(1400, 2))
centres = rng.uniform(-1, 1, size=(25, 2))
centres = 8 * centres / np.linalg.norm(centres, axis=1, keepdims=True)
tiny = np.repeat(centres, 4, axis=0) + 0.05 * rng.normal(size=(100, 2))
X = np.vstack([big, tiny])
y = np.concatenate([np.sin(big[:, 0]), np.repeat(rng.uniform(-3, 3, 25), 4)]) + 0.05 * rng.normal(size=1500)
order = rng.permutation(1500)
X, y = X[order], y[order]
X_new, y_new, X, y = X[1350:], y[1350:], X[:1350], y[:1350]  # 150 rows the study never sees

# %%
# A few seconds of study (the command's default budget is 120 s).
advice = advise(X, y, budget=10, seed=0)
print(advice.summary())

# %%
# The promise, checked on the rows the study never saw: the advised model refitted on every row
# against the default.
model = advice.make_estimator().fit(X, y)
default = KRR(random_state=0).fit(X, y)
mse = float(np.mean((model.predict(X_new) - y_new) ** 2))
mse_default = float(np.mean((default.predict(X_new) - y_new) ** 2))
print(f"held-out MSE: advised {mse:.4f} (promised {advice.interval[0]:.4f} .. {advice.interval[1]:.4f}), "
      f"default {mse_default:.4f}")

# %%
# The confirmation folds, paired: each line joins the default's and the advised model's error on one fold.
folds = {}
for row in advice.confirmation:
    folds.setdefault(row["fold"], {})[row["method"]] = row["metric"]
fig, ax = plt.subplots(figsize=(4.5, 3.2))
for f in folds.values():
    ax.plot([0, 1], [f["default"], f.get("selected", f["default"])], "o-", color="tab:blue", alpha=0.6)
ax.set_xticks([0, 1], ["KRR()", "advised"])
ax.set_yscale("log")
ax.set_ylabel("validation MSE per fold")
ax.set_title("confirmation folds")
fig.tight_layout()
plt.show()
