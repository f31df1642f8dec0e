"""
Landmark samplers on your data
==============================

Which landmarks approximate *your* kernel matrix best, and at what cost? Every sampler of
``sampling.available()`` is one call away; here four of them on one data set: the relative
trace-norm error ``(tr K - tr K~) / tr K`` of the Nyström approximation (exact, computed without
forming K, :func:`nystrom_bench.spectrum.trace_error`) against the number of landmarks, and the
kernel entries each draw evaluated (``info["kernel_entries"]``).

RPCholesky is Chen, Epperly, Tropp & Webber (CPAM 2024); recursive ridge leverage sampling is
Musco & Musco (NIPS 2017). The benchmark's ``samplers`` study does this on 20 data sets and
answers *when* non-uniform landmarks win (see the findings).
"""

import matplotlib.pyplot as plt

from nystrom_bench import data, kernels, sampling, spectrum

X = data.load("digits", seed=0).X_train  # any (n, d) array of yours
gamma = 1.0 / kernels.median_sq_dist(X)  # the median heuristic
kern = kernels.make("gaussian", gamma=gamma)
print(X.shape, f"gamma = {gamma:.3g}")
print("every sampler:", ", ".join(sampling.available()))

# %%
samplers, ms = ["uniform", "kmeans", "ridge_leverage", "rpcholesky"], [10, 20, 40, 80]
errors = {s: [] for s in samplers}
for s in samplers:
    for m in ms:
        info = {}
        idx = sampling.sample(s, X, kern, c=m, seed=0, info=info)
        F = spectrum.nystrom_factor(X, kern, idx)
        errors[s].append(spectrum.trace_error(X, kern, F))
    print(f"{s:15s} m = {ms[-1]}: trace error {errors[s][-1]:.4f}, "
          f"{info['kernel_entries']:,} kernel entries, {info['seconds']:.3f} s")

# %%
# ``kernel_entries`` counts the sampler's own evaluations: uniform sampling needs none and k-means
# returns points, not rows; building the Nyström factor then costs ``C = K(X, Z)``, n m entries, for
# every sampler (RPCholesky returns its factor with its (m + 1) n entries).
fig, ax = plt.subplots(figsize=(5, 3.2))
for s in samplers:
    ax.plot(ms, errors[s], "o-", label=s)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("landmarks m")
ax.set_ylabel("relative trace-norm error")
ax.legend()
fig.tight_layout()

# %%
# Whether a non-uniform sampler pays off depends on the data: ``spectrum.properties`` computes the
# properties the benchmark found predictive (the spectral decay, for RPCholesky).
print({k: round(float(v), 3) for k, v in spectrum.properties(X, kern, lam=1e-3).items()})
