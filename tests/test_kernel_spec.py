"""Kernel specs: spec_keys, check_spec (no data) and from_spec (widths resolved on data)."""

import numpy as np
import pytest

from nystrom_bench import kernels


def old_resolve_kernel(spec, X):
    """The KRR study's ``resolve_kernel`` as it was before kernel specs (reference)."""
    spec = dict(spec)
    name = spec.pop("kernel")
    scale = float(spec.pop("scale", 1.0))
    out = {"kernel": name}
    for key, value in spec.items():
        if key == "gamma":
            out["gamma"] = kernels.resolve_width(value, X, scale)
        elif key == "sigma":
            out["sigma"] = (
                float(np.sqrt(scale / kernels.resolve_width(value, X))) if isinstance(value, str) else float(value)
            )
        else:
            out[key] = value
    return out


@pytest.mark.parametrize("name,keys", [
    ("gaussian", ("gamma", "sigma", "b", "scale")),
    ("rbf", ("gamma", "sigma", "b", "scale")),
    ("Gaussian", ("gamma", "sigma", "b", "scale")),
    ("laplacian", ("gamma", "scale")),
    ("polynomial", ("gamma", "degree", "coef0", "scale")),
    ("linear", ()),
    ("epanechnikov", ("sigma", "scale")),
])
def test_spec_keys(name, keys):
    assert kernels.spec_keys(name) == keys


def test_spec_keys_unknown_kernel():
    with pytest.raises(ValueError, match="unknown kernel 'foo'; choose one of .*gaussian"):
        kernels.spec_keys("foo")


def test_check_spec_normalises_a_copy():
    spec = {"kernel": "Gaussian", "gamma": np.float64(2), "scale": 3}
    with pytest.raises(ValueError, match="scale only applies"):
        kernels.check_spec(spec)
    spec = {"kernel": "Gaussian", "gamma": "median", "scale": 3}
    out = kernels.check_spec(spec)
    assert out == {"kernel": "gaussian", "gamma": "median", "scale": 3.0} and type(out["scale"]) is float
    assert spec["kernel"] == "Gaussian"  # the input is untouched
    out = kernels.check_spec({"kernel": "polynomial", "degree": np.int64(2), "coef0": -1, "gamma": 1})
    assert out == {"kernel": "polynomial", "degree": 2, "coef0": -1.0, "gamma": 1.0}
    assert type(out["degree"]) is int and type(out["gamma"]) is float
    assert kernels.check_spec({"kernel": "rbf"}) == {"kernel": "rbf"}  # the alias stays as given
    assert kernels.check_spec({"kernel": "linear"}) == {"kernel": "linear"}


@pytest.mark.parametrize("spec,match", [
    ({}, r"^kernel: no 'kernel' given; choose one of epanechnikov, gaussian, .*rbf"),
    ({"kernel": "gauss"}, r"^kernel: unknown kernel 'gauss' \(did you mean 'gaussian'\?\); choose one of epanechnikov, gaussian"),
    ({"kernel": 3}, r"^kernel: unknown kernel 3; choose one of"),
    ("gaussian", r"^kernel: a kernel spec must be a mapping"),
    # keys the kernel does not take
    ({"kernel": "laplacian", "sigma": 1.0},
     r"^kernel: 'sigma' is not a parameter of the laplacian kernel; it takes: gamma$"),
    ({"kernel": "gaussian", "degree": 2},
     r"^kernel: 'degree' is not a parameter of the gaussian kernel; it takes: gamma, sigma, b$"),
    ({"kernel": "epanechnikov", "gamma": 1.0},
     r"^kernel: 'gamma' is not a parameter of the epanechnikov kernel; it takes: sigma$"),
    ({"kernel": "polynomial", "sigma": 1.0},
     r"'sigma' is not a parameter of the polynomial kernel; it takes: gamma, degree, coef0$"),
    ({"kernel": "linear", "gamma": 1.0}, r"'gamma' is not a parameter of the linear kernel; it takes no parameters"),
    ({"kernel": "linear", "scale": 1.0}, r"'scale' is not a parameter of the linear kernel"),
    ({"kernel": "gaussian", "gamme": 1.0}, r"'gamme' is not a parameter of the gaussian kernel"),
    # widths
    ({"kernel": "gaussian", "gamma": "medain"},
     r"^kernel: gamma = 'medain' is not a width heuristic; give a positive number or one of 'median', 'mean'$"),
    ({"kernel": "epanechnikov", "sigma": "Median"}, r"sigma = 'Median' is not a width heuristic"),
    ({"kernel": "gaussian", "gamma": 0}, r"^kernel: gamma must be a positive finite number or one of 'median', "
                                         r"'mean', got 0$"),
    ({"kernel": "gaussian", "sigma": -1.0}, r"sigma must be a positive finite number .* got -1.0"),
    ({"kernel": "gaussian", "b": float("inf")}, r"b must be a positive finite number .* got inf"),
    ({"kernel": "laplacian", "gamma": float("nan")}, r"gamma must be a positive finite number .* got nan"),
    ({"kernel": "gaussian", "gamma": True}, r"gamma must be a positive finite number .* got True"),
    ({"kernel": "gaussian", "gamma": None}, r"gamma must be a positive finite number .* got None"),
    ({"kernel": "gaussian", "gamma": [1.0]}, r"gamma must be a positive finite number"),
    ({"kernel": "polynomial", "gamma": -0.5}, r"gamma must be a positive finite number"),
    ({"kernel": "gaussian", "gamma": 1.0, "sigma": 2.0},
     r"^kernel: give at most one of gamma, sigma, b for the gaussian kernel, got gamma and sigma$"),
    ({"kernel": "gaussian", "sigma": "median", "b": 2.0}, r"give at most one of gamma, sigma, b .* got sigma and b"),
    # degree, coef0
    ({"kernel": "polynomial", "degree": 0}, r"^kernel: degree must be a positive integer, got 0$"),
    ({"kernel": "polynomial", "degree": 2.5}, r"degree must be a positive integer, got 2.5"),
    ({"kernel": "polynomial", "degree": 2.0}, r"degree must be a positive integer, got 2.0"),
    ({"kernel": "polynomial", "degree": True}, r"degree must be a positive integer, got True"),
    ({"kernel": "polynomial", "coef0": float("inf")}, r"^kernel: coef0 must be a finite number, got inf$"),
    ({"kernel": "polynomial", "coef0": "1"}, r"coef0 must be a finite number, got '1'"),
    # scale
    ({"kernel": "gaussian", "gamma": 0.5, "scale": 2.0},
     r"^kernel: scale only applies to a heuristic width \('median' or 'mean'\), got gamma = 0.5; drop scale"),
    ({"kernel": "gaussian", "scale": 2.0}, r"scale only applies to a heuristic width .* got no width"),
    ({"kernel": "gaussian", "gamma": "median", "scale": 0}, r"^kernel: scale must be a positive finite number, got 0"),
    ({"kernel": "gaussian", "gamma": "median", "scale": "2"}, r"scale must be a positive finite number, got '2'"),
])
def test_check_spec_errors(spec, match):
    with pytest.raises(ValueError, match=match):
        kernels.check_spec(spec)
    with pytest.raises(ValueError, match=match):  # from_spec checks first, data or not
        kernels.from_spec(spec, np.ones((3, 1)))


def test_where_prefixes_every_message():
    with pytest.raises(ValueError, match=r"^studies\.krr\.kernels\.g: 'sigma' is not a parameter of the laplacian"):
        kernels.check_spec({"kernel": "laplacian", "sigma": 1.0}, where="studies.krr.kernels.g")
    with pytest.raises(ValueError, match=r"^KRR: gamma = 'median' is computed from the data: pass X"):
        kernels.from_spec({"kernel": "gaussian", "gamma": "median"}, where="KRR")
    with pytest.raises(ValueError, match=r"^K: b = 'mean': all points coincide"):
        kernels.from_spec({"kernel": "gaussian", "b": "mean"}, np.ones((4, 2)), where="K")


@pytest.mark.parametrize("spec,params", [
    ({"kernel": "gaussian", "sigma": 0.7}, {"sigma": 0.7}),
    ({"kernel": "gaussian", "gamma": 0.3}, {"gamma": 0.3}),
    ({"kernel": "rbf", "b": 2.0}, {"b": 2.0}),
    ({"kernel": "gaussian"}, {}),
    ({"kernel": "laplacian", "gamma": 0.2}, {"gamma": 0.2}),
    ({"kernel": "polynomial", "degree": 2, "coef0": 0.5}, {"degree": 2, "coef0": 0.5}),
    ({"kernel": "polynomial"}, {}),
    ({"kernel": "linear"}, {}),
    ({"kernel": "epanechnikov", "sigma": 1.5}, {"sigma": 1.5}),
    ({"kernel": "Epanechnikov"}, {}),
])
def test_from_spec_equals_make(spec, params, X):
    kern = kernels.from_spec(spec)
    ref = kernels.make(spec["kernel"], **params)
    assert type(kern) is type(ref) and kern.params() == ref.params()
    np.testing.assert_array_equal(kern(X, X[:7]), ref(X, X[:7]))


@pytest.mark.parametrize("s", [0.1, 1.0, 10.0])
def test_from_spec_gaussian_sigma_is_used(s, X):
    np.testing.assert_array_equal(kernels.from_spec({"kernel": "gaussian", "sigma": s})(X),
                                  kernels.make("gaussian", sigma=s)(X))
    assert kernels.from_spec({"kernel": "gaussian", "sigma": s}).gamma == 1 / (2 * s**2)


@pytest.mark.parametrize("spec", [
    {"kernel": "gaussian", "gamma": "median"},
    {"kernel": "gaussian", "gamma": "mean", "scale": 0.5},
    {"kernel": "gaussian", "sigma": "median"},
    {"kernel": "gaussian", "sigma": "mean", "scale": 3.0},
    {"kernel": "epanechnikov", "sigma": "median", "scale": 2.0},
    {"kernel": "laplacian", "gamma": "median", "scale": 4.0},
    {"kernel": "polynomial", "gamma": "mean", "degree": 2},
])
def test_heuristic_widths_equal_the_old_resolve_kernel(spec, rng):
    X = rng.normal(size=(70, 3))
    kern = kernels.from_spec(spec, X)
    old = old_resolve_kernel(spec, X)
    ref = kernels.make(old.pop("kernel"), **old)
    assert kern.params() == ref.params()  # bit-identical widths
    np.testing.assert_array_equal(kern(X), ref(X))


def test_heuristic_b_and_numeric_widths_need_no_data(rng):
    X = rng.normal(size=(40, 2))
    d = kernels.median_sq_dist(X)
    assert kernels.from_spec({"kernel": "gaussian", "b": "median", "scale": 2.0}, X).gamma == pytest.approx(2.0 / d)
    assert kernels.from_spec({"kernel": "gaussian", "b": "median"}, X).gamma == pytest.approx(
        kernels.from_spec({"kernel": "gaussian", "gamma": "median"}, X).gamma)
    # sigma heuristic: sigma^2 = scale * d, so gamma = 1 / (2 scale d)
    assert kernels.from_spec({"kernel": "gaussian", "sigma": "median", "scale": 3.0}, X).gamma == pytest.approx(
        1 / (2 * 3.0 * d))
    assert kernels.from_spec({"kernel": "gaussian", "gamma": 0.5}).gamma == 0.5  # no X needed
