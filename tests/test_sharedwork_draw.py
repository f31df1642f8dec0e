"""A landmark draw shared by the fits that would repeat it (nystrom_bench.sharedwork.SharedDraw): the same
landmarks and the same generator state afterwards as a draw of its own, the reuse charged."""

import numpy as np
import pytest

from nystrom_bench import sampling, seeding, sharedwork
from nystrom_bench.kernels import make
from nystrom_bench.studies.integration.methods import charged_seconds


@pytest.fixture(autouse=True)
def _fresh_memo():
    sharedwork.MEMO.clear()
    yield
    sharedwork.MEMO.clear()


def _X(n=160, seed=0):
    return np.random.default_rng(seed).normal(size=(n, 3))


@pytest.mark.parametrize("name", ["uniform", "kmeans", "gaussian_sketch", "leverage", "shared_leverage"])
def test_a_shared_draw_is_the_samplers_draw_and_leaves_the_stream_where_it_would(name):
    X, kern = _X(), make("gaussian", gamma=0.4)
    inner = sharedwork.SharedLeverage() if name == "shared_leverage" else name
    plain_rng = seeding.rng(3, "study", "data")
    plain = sampling.sample("leverage" if name == "shared_leverage" else name, X, kern, 12, seed=plain_rng)
    after = plain_rng.random()  # what the stream gives next
    for call in range(3):
        rng = seeding.rng(3, "study", "data")  # every fit of the ratio starts from the same stream
        draw = sharedwork.SharedDraw(inner)
        got = sampling.sample(draw, X, kern, 12, seed=rng)
        assert type(got) is type(plain) and got.flags.writeable
        np.testing.assert_array_equal(got, plain)
        assert rng.random() == after
        assert (draw.shared_seconds > 0.0) == (call > 0)  # the first drew it on its own clock
        est = type("Fitted", (), {"sampler": draw})()
        assert charged_seconds(est) == draw.shared_seconds


def test_another_stream_count_kernel_or_data_draws_again():
    X, kern = _X(), make("gaussian", gamma=0.4)
    draw = sharedwork.SharedDraw("uniform")
    first = sampling.sample(draw, X, kern, 12, seed=np.random.default_rng(1))
    for args in ((X, kern, 12, 2), (X, kern, 13, 1), (X, make("gaussian", gamma=0.4 * (1 + 1e-15)), 12, 1),
                 (X[1:], kern, 12, 1)):
        Xa, k, c, seed = args
        got = sampling.sample(draw, Xa, k, c, seed=np.random.default_rng(seed))
        assert draw.shared_seconds == 0.0
        np.testing.assert_array_equal(got, sampling.sample("uniform", Xa, k, c, seed=np.random.default_rng(seed)))
    assert sharedwork.MEMO.hits == 0 and sharedwork.MEMO.misses == 5
    np.testing.assert_array_equal(sampling.sample(draw, X, kern, 12, seed=np.random.default_rng(1)), first)
    assert sharedwork.MEMO.hits == 1


def test_a_reused_leverage_draw_charges_the_reduction_it_was_charged():
    X, kern = _X(), make("gaussian", gamma=0.4)
    # the reduction computed by another ratio's draw first
    sampling.sample(sharedwork.SharedLeverage(), X, kern, 30, seed=np.random.default_rng(0))
    first = sharedwork.SharedDraw(sharedwork.SharedLeverage())
    sampling.sample(first, X, kern, 12, seed=np.random.default_rng(1))
    assert first.shared_seconds > 0.0  # drawn now, charged the reduction it reused
    again = sharedwork.SharedDraw(sharedwork.SharedLeverage())
    sampling.sample(again, X, kern, 12, seed=np.random.default_rng(1))
    assert again.shared_seconds > first.shared_seconds  # the draw's seconds on top of the reduction's
