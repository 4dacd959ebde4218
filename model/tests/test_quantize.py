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


def test_blocks_scale_to_their_own_maximum():
    from tiankong_model.quantize import quantize_blocks

    rng = np.random.default_rng(1)
    weight = rng.normal(size=(64, 6)).astype(np.float32)
    weight[5, 2] = 40.0  # an outlier coarsens only its own block of column 2
    weight[16:32, 4] = 0.0  # an all-zero block: scale 1, exact
    q, scale = quantize_blocks(weight, 16)
    assert q.shape == (64, 6) and q.dtype == np.int8 and scale.shape == (4, 1, 6)
    blocks = weight.reshape(4, 16, 6)
    expected = np.where(np.abs(blocks).max(1) == 0, 127, np.abs(blocks).max(1)) / 127
    np.testing.assert_allclose(scale[:, 0, :], expected, rtol=1e-6)
    restored = (q.reshape(4, 16, 6) * scale).reshape(64, 6)
    assert (np.abs(restored - weight) <= np.repeat(scale[:, 0, :], 16, axis=0) / 2 + 1e-7).all()
    assert (restored[16:32, 4] == 0).all()
    per_channel, channel_scale = quantize_blocks(weight, None)
    assert channel_scale.shape == (1, 6)
    outlier_error = np.abs(per_channel * channel_scale - weight)[32:, 2].max()
    assert np.abs(restored - weight)[32:, 2].max() * 10 < outlier_error  # the outlier's block only


def test_gptq_lowers_the_output_error_and_matches_nearest_rounding_for_white_inputs():
    from tiankong_model.quantize import gptq_columns, quantize_blocks

    rng = np.random.default_rng(2)
    weight = rng.normal(size=(64, 24)).astype(np.float32)
    # Correlated inputs with a few strong directions, as LayerNorm outputs have.
    mixing = rng.normal(size=(64, 64)) * np.linspace(3, 0.1, 64)
    x = rng.normal(size=(4000, 64)) @ mixing
    hessian = x.T @ x / len(x)
    for block in (None, 16):
        nearest_q, nearest_scale = quantize_blocks(weight, block)
        q, scale = gptq_columns(weight, hessian, block)
        assert q.dtype == np.int8 and q.shape == weight.shape and scale.shape == nearest_scale.shape
        assert np.abs(q).max() <= 127

        def restored(q, scale, block=block):
            return q * scale if block is None else (q.reshape(-1, block, 24) * scale).reshape(64, 24)

        nearest_error = np.linalg.norm(x @ (restored(nearest_q, nearest_scale) - weight))
        assert np.linalg.norm(x @ (restored(q, scale) - weight)) < 0.7 * nearest_error
        # With uncorrelated inputs of equal energy nothing is gained by moving errors: nearest rounding.
        white_q, _ = gptq_columns(weight, np.eye(64), block)
        assert np.abs(white_q.astype(int) - nearest_q).max() <= 1 and (white_q == nearest_q).mean() > 0.999
