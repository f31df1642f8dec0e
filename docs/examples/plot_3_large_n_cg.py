"""
Large n: conjugate gradient with streamed kernel blocks
=======================================================

``solver="cg"`` solves the Nyström system ``(C^T C + alpha W) beta = C^T y`` by conjugate gradient
with FALKON's preconditioner (Rudi, Carratino & Rosasco, NIPS 2017): each iteration is one pass
over cache-sized blocks of ``C = K(X, Z)``, evaluated and dropped, so memory is O(m^2) whatever n.
``dtype="float32"`` evaluates the blocks in float32 and keeps every sum and the m x m solves in
float64. The library reaches n = 10^6 this way (``make bench-large``); scaled down here to run in
seconds.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from nystrom_bench import learners
from nystrom_bench.data import make_scalable

X, y = make_scalable(12_000, 20, seed=0)
X_train, y_train, X_test, y_test = X[:10_000], y[:10_000], X[10_000:], y[10_000:]

# %%
rows = []
for solver, dtype in [("direct", "float64"), ("cg", "float64"), ("cg", "float32")]:
    model = learners.KRR(gamma=0.05, alpha=1e-6 * len(X_train), n_components=300, solver=solver,
                         dtype=dtype, cg_tol=1e-3, random_state=0)
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_s = time.perf_counter() - start
    rmse = np.sqrt(np.mean((model.predict(X_test) - y_test) ** 2))
    iters = f", {model.n_iter_} iterations" if model.solver_ == "cg" else ""
    print(f"{solver:6s} {dtype}: test RMSE {rmse:.4f}, fit {fit_s:.2f} s{iters}")
    rows.append((f"{solver}\n{dtype}", rmse, fit_s))

fig, axes = plt.subplots(1, 2, figsize=(7, 2.8))
axes[0].bar([r[0] for r in rows], [r[1] for r in rows])
axes[0].set_ylabel("test RMSE")
axes[1].bar([r[0] for r in rows], [r[2] for r in rows], color="tab:orange")
axes[1].set_ylabel("fit seconds (this build)")
fig.tight_layout()

# %%
# The three agree to the CG tolerance; ``solver="auto"`` (the default) picks CG above
# n * m^2 = 10^11, where the n x m block would no longer be worth holding. At this small n float32 is
# no faster: a process's first float32 block loads the compiled ``exp`` (about a second), and warm it
# still took 1.7x float64's CPU time when this page was written (n = 10^4, m = 300). float32 pays off
# from n of about 10^5 (the Performance page of the user guide: 5.6x faster than
# scikit-learn at n = 10^5, m = 3,000, and n = 10^6 in 4.6 minutes).
