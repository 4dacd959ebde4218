"""Per-channel symmetric int8 weight quantization."""

from __future__ import annotations

import numpy as np
from tiankong_model.quantize import quantize_columns


def test_columns_scale_to_their_own_maximum():
    rng = np.random.default_rng(0)
    weight = rng.normal(size=(48, 10)).astype(np.float32) * np.linspace(0.01, 5, 10, dtype=np.float32)
    q, scale = quantize_columns(weight)
    assert q.dtype == np.int8 and scale.shape == (10,)
    np.testing.assert_allclose(scale, np.abs(weight).max(axis=0) / 127, rtol=1e-6)
    assert (np.abs(q).max(axis=0) == 127).all()
    # Rounding error is at most half a step of each column's own scale.
    assert (np.abs(q * scale - weight) <= scale / 2 + 1e-7).all()


def test_zero_column_is_exact():
    weight = np.zeros((4, 3), dtype=np.float32)
    weight[:, 1] = [1, -2, 0.5, 0]
    q, scale = quantize_columns(weight)
    assert scale[0] == scale[2] == 1.0
    assert (q[:, 0] == 0).all() and (q[:, 2] == 0).all()
    np.testing.assert_allclose(q[:, 1] * scale[1], weight[:, 1], atol=1 / 127)
