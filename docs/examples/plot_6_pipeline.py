"""
NystromFeatures in a scikit-learn pipeline
==========================================

``learners.NystromFeatures`` has the parameters and attributes of scikit-learn's ``Nystroem``
(``kernel``, ``gamma``, ``n_components``, ``components_``, ...) and takes any landmark sampler. In a
pipeline with a linear classifier it gives a kernel machine in O(n m) memory; ``GridSearchCV``
tunes its width and its sampler like any other parameter.
"""

from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from nystrom_bench import data, learners

split = data.load("breast_cancer", seed=0)
pipe = make_pipeline(StandardScaler(),
                     learners.NystromFeatures(n_components=50, random_state=0),
                     LinearSVC())

# %%
search = GridSearchCV(pipe, {"nystromfeatures__gamma": [0.003, 0.01, 0.03, 0.1],
                             "nystromfeatures__sampler": ["uniform", "kmeans", "rpcholesky"]}, cv=3)
search.fit(split.X_train, split.y_train)
print("best:", search.best_params_)
print(f"test accuracy: {search.score(split.X_test, split.y_test):.3f}")

# %%
# The cross-validated accuracy of every pair, by sampler:
import pandas as pd  # noqa: E402

table = pd.DataFrame(search.cv_results_)[["param_nystromfeatures__sampler", "param_nystromfeatures__gamma",
                                          "mean_test_score"]]
grid = table.pivot(index="param_nystromfeatures__gamma", columns="param_nystromfeatures__sampler",
                   values="mean_test_score").astype(float)
print(grid.round(3))

import matplotlib.pyplot as plt  # noqa: E402

fig, ax = plt.subplots(figsize=(4.5, 3.2))
im = ax.imshow(grid.to_numpy(), cmap="viridis")
ax.set_xticks(range(grid.shape[1]), grid.columns)
ax.set_yticks(range(grid.shape[0]), [f"{g:g}" for g in grid.index])
ax.set_xlabel("sampler")
ax.set_ylabel(r"$\gamma$")
fig.colorbar(im, label="CV accuracy")
fig.tight_layout()
