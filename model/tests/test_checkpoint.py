"""Checkpoint I/O: HF parameter names, bin/safetensors round trips, legacy names, errors."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import torch
from tiankong_model.bert import BertConfig, BertForMaskedLM
from tiankong_model.checkpoint import BIN_NAME, SAFETENSORS_NAME, CheckpointError, load_checkpoint, save_checkpoint
from tiankong_model.safetensors import load_safetensors


def hf_bert_mlm_keys(num_layers: int) -> set[str]:
    """The state-dict keys of `transformers.BertForMaskedLM` (written out from HF's
    modeling_bert module tree, not from our model)."""
    keys = {f"bert.embeddings.{e}.weight" for e in ("word_embeddings", "position_embeddings", "token_type_embeddings")}
    keys |= {"bert.embeddings.LayerNorm.weight", "bert.embeddings.LayerNorm.bias"}
    for i in range(num_layers):
        p = f"bert.encoder.layer.{i}."
        for linear in (
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
            "intermediate.dense",
            "output.dense",
        ):
            keys |= {p + linear + ".weight", p + linear + ".bias"}
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            keys |= {p + norm + ".weight", p + norm + ".bias"}
    keys |= {
        "cls.predictions.bias",
        "cls.predictions.transform.dense.weight",
        "cls.predictions.transform.dense.bias",
        "cls.predictions.transform.LayerNorm.weight",
        "cls.predictions.transform.LayerNorm.bias",
        "cls.predictions.decoder.weight",
        "cls.predictions.decoder.bias",
    }
    return keys


def assert_same_weights(a: torch.nn.Module, b: torch.nn.Module) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for key in sa:
        assert torch.equal(sa[key], sb[key]), key


def test_state_dict_names_match_hugging_face(tiny_model):
    model, _ = tiny_model
    assert set(model.state_dict()) == hf_bert_mlm_keys(model.config.num_hidden_layers)


@pytest.mark.parametrize("fmt", ["bin", "safetensors"])
def test_round_trip(tiny_model, tmp_path, fmt):
    model, vocab = tiny_model
    save_checkpoint(model, vocab, tmp_path, formats=(fmt,))
    loaded, loaded_vocab = load_checkpoint(tmp_path)
    assert loaded_vocab == vocab
    assert_same_weights(model, loaded)
    assert loaded.cls.predictions.decoder.weight is loaded.bert.embeddings.word_embeddings.weight


def test_safetensors_layout_matches_the_format(tiny_model, tmp_path):
    """Parses our file by the format's definition, independently of our reader."""
    model, vocab = tiny_model
    save_checkpoint(model, vocab, tmp_path, formats=("safetensors",))
    data = (tmp_path / SAFETENSORS_NAME).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0
    header = json.loads(data[8 : 8 + n])
    assert header.pop("__metadata__") == {"format": "pt"}
    # HF never stores the tied duplicates in safetensors.
    assert set(header) == hf_bert_mlm_keys(2) - {"cls.predictions.decoder.weight", "cls.predictions.decoder.bias"}
    info = header["bert.embeddings.position_embeddings.weight"]
    begin, end = info["data_offsets"]
    stored = np.frombuffer(data[8 + n + begin : 8 + n + end], dtype="<f4").reshape(info["shape"])
    assert info["dtype"] == "F32"
    np.testing.assert_array_equal(stored, model.bert.embeddings.position_embeddings.weight.detach().numpy())


def write_safetensors_by_hand(path, tensors: dict[str, tuple[str, list[int], bytes]]) -> None:
    header, body = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + body)


def test_reads_f16_bf16_i64(tmp_path):
    values = np.array([1.5, -2.25, 0.0, 3.0], dtype=np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype("<u2").tobytes()  # exact: these values fit in bf16
    write_safetensors_by_hand(
        tmp_path / "t.safetensors",
        {
            "half": ("F16", [2, 2], values.astype("<f2").tobytes()),
            "brain": ("BF16", [4], bf16),
            "ids": ("I64", [3], np.array([7, -1, 2**40], dtype="<i8").tobytes()),
        },
    )
    tensors = load_safetensors(tmp_path / "t.safetensors")
    np.testing.assert_array_equal(tensors["half"].numpy(), values.reshape(2, 2).astype(np.float16))
    np.testing.assert_array_equal(tensors["brain"].numpy(), values)
    assert tensors["ids"].tolist() == [7, -1, 2**40]


def test_rejects_truncated_safetensors(tmp_path):
    write_safetensors_by_hand(tmp_path / "t.safetensors", {"x": ("F32", [4], b"\0" * 12)})
    with pytest.raises(ValueError, match="'x'.*needs 16 bytes"):
        load_safetensors(tmp_path / "t.safetensors")


def test_legacy_names_and_known_unused_keys_load(tiny_model, tmp_path):
    """A TF-converted HF .bin: LayerNorm gamma/beta, pooler, NSP head, position_ids buffer."""
    model, vocab = tiny_model
    save_checkpoint(model, vocab, tmp_path, formats=("bin",))
    state = torch.load(tmp_path / BIN_NAME)
    legacy = {
        k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
        for k, v in state.items()
    }
    hidden = model.config.hidden_size
    legacy.update(
        {
            "bert.pooler.dense.weight": torch.zeros(hidden, hidden),
            "bert.pooler.dense.bias": torch.zeros(hidden),
            "cls.seq_relationship.weight": torch.zeros(2, hidden),
            "cls.seq_relationship.bias": torch.zeros(2),
            "bert.embeddings.position_ids": torch.arange(model.config.max_position_embeddings)[None],
        }
    )
    assert any(k.endswith("gamma") for k in legacy)
    torch.save(legacy, tmp_path / BIN_NAME)
    loaded, _ = load_checkpoint(tmp_path)
    assert_same_weights(model, loaded)


def test_unknown_and_missing_keys_are_listed(tiny_model, tmp_path):
    model, vocab = tiny_model
    save_checkpoint(model, vocab, tmp_path, formats=("bin",))
    state = torch.load(tmp_path / BIN_NAME)
    state["bert.encoder.layer.0.attention.self.rotary.weight"] = torch.zeros(1)
    del state["bert.encoder.layer.1.output.dense.bias"]
    torch.save(state, tmp_path / BIN_NAME)
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(tmp_path)
    message = str(err.value)
    assert "unknown keys (1): bert.encoder.layer.0.attention.self.rotary.weight" in message
    assert "missing keys (1): bert.encoder.layer.1.output.dense.bias" in message


def test_vocab_size_mismatch_is_reported(tiny_model, tmp_path):
    model, vocab = tiny_model
    save_checkpoint(model, vocab, tmp_path, formats=("safetensors",))
    (tmp_path / "vocab.txt").write_text("".join(t + "\n" for t in vocab[:-1]), encoding="utf-8")
    with pytest.raises(
        CheckpointError, match=f"vocab.txt has {len(vocab) - 1} tokens but config.json says vocab_size {len(vocab)}"
    ):
        load_checkpoint(tmp_path)


def test_shape_mismatch_is_reported(tmp_path):
    small = BertForMaskedLM(
        BertConfig(
            vocab_size=10,
            hidden_size=8,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=16,
            max_position_embeddings=16,
        )
    )
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "d", "e"]
    save_checkpoint(small, vocab, tmp_path, formats=("safetensors",))
    config = json.loads((tmp_path / "config.json").read_text())
    config["intermediate_size"] = 32
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match=r"intermediate.dense.weight: file \(16, 8\) vs model \(32, 8\)"):
        load_checkpoint(tmp_path)


def test_missing_weights_file_is_reported(tiny_model, tmp_path):
    model, vocab = tiny_model
    save_checkpoint(model, vocab, tmp_path, formats=("safetensors",))
    (tmp_path / SAFETENSORS_NAME).unlink()
    with pytest.raises(CheckpointError, match="no model.safetensors or pytorch_model.bin"):
        load_checkpoint(tmp_path)
