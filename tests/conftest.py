import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def X(rng):
    return rng.normal(size=(60, 4))
