import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def X(rng):
    return rng.normal(size=(60, 4))


@pytest.fixture
def config_error():
    """``config_error(name, block, patch, match)``: a study block with ``patch`` applied (its own label
    as the study name; a patched method list becomes the reference ``x``) fails the config check with a
    message matching ``match``."""
    from nystrom_bench.config import ConfigError, check

    def run(name, block, patch, match):
        block = {**block, **patch}
        block.pop("kind", None)
        if patch.get("methods"):
            block["reference"] = "x"
        with pytest.raises(ConfigError, match=match):
            check({"studies": {name: block}})

    return run
