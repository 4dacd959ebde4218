"""Per-channel symmetric int8 weight quantization."""

from __future__ import annotations

import numpy as np
import pytest
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


def test_gptq_act_order_with_blocks_keeps_the_nearest_scales_and_lowers_the_output_error():
    from tiankong_model.quantize import gptq_columns, quantize_blocks

    rng = np.random.default_rng(3)
    weight = rng.normal(size=(64, 24)).astype(np.float32)
    # Input energy not in row order, so that act order visits the rows out of their blocks.
    mixing = rng.normal(size=(64, 64)) * rng.permutation(np.linspace(3, 0.1, 64))
    x = rng.normal(size=(4000, 64)) @ mixing
    hessian = x.T @ x / len(x)
    nearest_q, nearest_scale = quantize_blocks(weight, 16)
    q, scale = gptq_columns(weight, hessian, 16, act_order=True)
    np.testing.assert_array_equal(scale, nearest_scale)  # static: from the original weights
    assert q.dtype == np.int8 and np.abs(q).max() <= 127

    def error(q, scale):
        return np.linalg.norm(x @ ((q.reshape(4, 16, 24) * scale).reshape(64, 24) - weight))

    in_order_q, in_order_scale = gptq_columns(weight, hessian, 16, act_order=False)
    assert error(q, scale) < 0.7 * error(nearest_q, nearest_scale)
    assert error(q, scale) < error(in_order_q, in_order_scale) * 1.1  # no worse than in row order


def test_gptq_lowers_the_output_error_and_matches_nearest_rounding_for_white_inputs():
    from tiankong_model.quantize import gptq_columns, quantize_blocks

    rng = np.random.default_rng(2)
    weight = rng.normal(size=(64, 24)).astype(np.float32)
    # Correlated inputs with a few strong directions, as LayerNorm outputs have.
    mixing = rng.normal(size=(64, 64)) * np.linspace(3, 0.1, 64)
    x = rng.normal(size=(4000, 64)) @ mixing
    hessian = x.T @ x / len(x)
    for block, act_order in ((None, True), (None, False), (16, True), (16, False)):
        nearest_q, nearest_scale = quantize_blocks(weight, block)
        q, scale = gptq_columns(weight, hessian, block, act_order=act_order)
        assert q.dtype == np.int8 and q.shape == weight.shape and scale.shape == nearest_scale.shape
        assert np.abs(q).max() <= 127

        def restored(q, scale, block=block):
            return q * scale if block is None else (q.reshape(-1, block, 24) * scale).reshape(64, 24)

        nearest_error = np.linalg.norm(x @ (restored(nearest_q, nearest_scale) - weight))
        assert np.linalg.norm(x @ (restored(q, scale) - weight)) < 0.7 * nearest_error
        # With uncorrelated inputs of equal energy nothing is gained by moving errors: nearest rounding.
        white_q, _ = gptq_columns(weight, np.eye(64), block, act_order=act_order)
        assert np.abs(white_q.astype(int) - nearest_q).max() <= 1 and (white_q == nearest_q).mean() > 0.999


def test_float16_block_scales_round_up_and_the_values_are_rounded_against_them():
    from tiankong_model.quantize import gptq_columns, quantize_blocks, stored_scale

    rng = np.random.default_rng(4)
    weight = (rng.normal(size=(32, 6)) * np.array([1e-6, 1e-3, 0.1, 1, 30, 500])).astype(np.float32)
    q, scale = quantize_blocks(weight, 8, np.float16)
    assert scale.dtype == np.float16 and scale.shape == (4, 1, 6) and (scale > 0).all()
    exact = np.abs(weight.reshape(4, 8, 6)).max(axis=1, keepdims=True) / 127
    assert (scale.astype(np.float32) >= exact).all()  # never below: no value leaves -127..127
    restored = (q.reshape(4, 8, 6) * scale.astype(np.float32)).reshape(32, 6)
    half_step = np.repeat(scale.astype(np.float32)[:, 0, :], 8, axis=0) / 2
    assert (np.abs(restored - weight) <= half_step * (1 + 1e-6)).all()
    # Against the float32 scales: at most a float16 step (2^-10 relative) coarser where they are
    # normal float16 numbers (weights from about 0.01); below, at most the smallest step (6e-8).
    _, scale32 = quantize_blocks(weight, 8)
    np.testing.assert_allclose(scale.astype(np.float32)[..., 2:], scale32[..., 2:], rtol=2**-10)
    assert (scale.astype(np.float32) - scale32)[..., :2].max() <= 6e-8
    np.testing.assert_array_equal(stored_scale(scale32, np.float32), scale32)
    hessian = np.eye(32)
    for act_order in (False, True):
        gq, gscale = gptq_columns(weight, hessian, 8, act_order=act_order, scale_dtype=np.float16)
        assert gscale.dtype == np.float16 and gscale.shape == (4, 1, 6)
        assert np.abs(gq.astype(int) - q).max() <= 1
    for call in (
        lambda: quantize_blocks(weight, None, np.float16),
        lambda: gptq_columns(weight, hessian, None, scale_dtype=np.float16),
    ):
        with pytest.raises(ValueError, match="need per-block scales"):
            call()
