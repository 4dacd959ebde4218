"""round_int8 against a numpy implementation of symmetric int8 with a scale per block."""

from __future__ import annotations

import numpy as np
import torch
from tiankong_model.int8_sensitivity import round_int8


def test_round_int8_matches_a_numpy_block_rounding():
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((6, 32)).astype(np.float32) * rng.uniform(0.01, 3, (6, 1)).astype(np.float32)
    expected = np.empty_like(weight)
    for r in range(6):
        for b in range(0, 32, 8):
            block = weight[r, b : b + 8]
            scale = np.abs(block).max() / 127
            expected[r, b : b + 8] = np.clip(np.round(block / scale), -127, 127) * scale
    got = round_int8(torch.from_numpy(weight), 8).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    assert not np.array_equal(got, weight)  # it does round
