"""round_int8 against a numpy implementation of symmetric int8 with a scale per block; --forms parsing."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiankong_model.int8_sensitivity import parse_forms, round_int8


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


def test_round_int8_per_channel_is_one_scale_per_output_row():
    weight = torch.tensor([[1.0, -0.5, 0.25], [100.0, 3.0, -7.0]])
    got = round_int8(weight, None).numpy()
    np.testing.assert_allclose(got[0], np.round(weight[0].numpy() * 127) / 127, rtol=1e-6)
    scale = 100.0 / 127
    np.testing.assert_allclose(got[1], np.round(weight[1].numpy() / scale) * scale, rtol=1e-6)


def test_parse_forms_reads_roundings_and_blocks_and_names_what_is_wrong():
    assert parse_forms("gptq:8, nearest:channel,fp16,gptq-act:4:f16") == [
        ("gptq", 8, "f32"),
        ("nearest", None, "f32"),
        ("fp16", None, "f32"),
        ("gptq-act", 4, "f16"),
    ]
    for text, message in (
        ("gptq", "ROUNDING:BLOCK"),
        ("rtn:8", "ROUNDING:BLOCK"),
        ("gptq:8:f16:x", "ROUNDING:BLOCK"),
        ("gptq:0", "'0'"),
        ("gptq:x", "'x'"),
        ("gptq:8:bf16", "'bf16'"),
        ("gptq:channel:f16", "need a block"),
    ):
        with pytest.raises(ValueError, match=message):
            parse_forms(text)


def test_forms_print_flips_and_margin_changes_per_form(tiny_checkpoint, tmp_path, capsys):
    """The whole --forms mode on the tiny checkpoint and a generated corpus: one line per form;
    float16 moves the margins least, per-channel nearest rounding more than GPTQ per block."""
    from tiankong_model.int8_sensitivity import main

    vocab = (tiny_checkpoint / "vocab.txt").read_text(encoding="utf-8").splitlines()
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    rng = np.random.default_rng(6)
    for split, count in (("train", 200), ("val", 120)):
        lengths = rng.integers(6, 30, count)
        rng.integers(5, len(vocab), lengths.sum()).astype(np.uint16).tofile(corpus / f"{split}.ids")
        np.concatenate([[0], np.cumsum(lengths)]).astype(np.uint32).tofile(corpus / f"{split}.idx")
    forms = "fp16,nearest:channel,gptq:16,gptq-act:8:f16"
    args = [str(tiny_checkpoint), str(corpus), "--lines", "100", "--calibrate-lines", "150", "--forms", forms]
    assert main(args) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [row[-1] for row in rows] == ["fp16", "nearest:channel:f32", "gptq:16:f32", "gptq-act:8:f16"]
    margin = {row[-1]: float(row[4]) for row in rows}
    assert 0 < margin["fp16"] < margin["gptq:16:f32"] < margin["nearest:channel:f32"]
    assert margin["gptq-act:8:f16"] < margin["nearest:channel:f32"]
