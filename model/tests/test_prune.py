"""Vocab pruning keeps the logits of kept tokens and counts tokens with HF's tokenizer."""

from __future__ import annotations

import json

import numpy as np
import torch
from conftest import run_onnx, sample_batch
from tiankong_model.export_model import export_model
from tiankong_model.prune import count_tokens, kept_token_ids, prune_model
from tiankong_model.vocab import read_vocab


def test_counts_come_from_the_reference_tokenizer(tiny_model, tmp_path):
    vocab = tiny_model[1]
    corpus = tmp_path / "c.txt"
    corpus.write_text("我们的\n\n好吗？ABC\n", encoding="utf-8")
    counts = count_tokens(vocab, False, [corpus], tmp_path)
    index = {t: i for i, t in enumerate(vocab)}
    seen = {vocab[i]: int(c) for i, c in enumerate(counts) if c}
    # Two non-empty lines, each encoded as [CLS] ... [SEP]; ABC has no entry for "ABC" -> [UNK].
    assert seen == {"[CLS]": 2, "[SEP]": 2, "我": 1, "们": 1, "的": 1, "好": 1, "吗": 1, "？": 1, "[UNK]": 1}
    assert index["[UNK]"] == 1


def test_kept_ids_are_ascending_and_include_specials():
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c"]
    counts = np.array([0, 0, 5, 5, 0, 3, 0, 1])
    assert kept_token_ids(vocab, counts) == [0, 1, 2, 3, 4, 5, 7]
    assert kept_token_ids(vocab, counts, min_count=2) == [0, 1, 2, 3, 4, 5]


def test_pruned_model_keeps_logits_of_kept_tokens(tiny_model):
    model, vocab = tiny_model
    keep = [i for i in range(len(vocab)) if i < 5 or i % 3 == 0]
    pruned, pruned_vocab = prune_model(model, vocab, keep)
    assert pruned_vocab == [vocab[i] for i in keep] and pruned.config.vocab_size == len(keep)
    new_id = {old: new for new, old in enumerate(keep)}
    batch = sample_batch(len(keep), seed=3)
    old_ids = np.vectorize(lambda i: keep[i])(batch["input_ids"])
    with torch.no_grad():
        full = model(
            torch.from_numpy(old_ids),
            torch.from_numpy(batch["attention_mask"]),
            mask_positions=torch.from_numpy(batch["mask_positions"]),
        )
        small = pruned(
            torch.from_numpy(batch["input_ids"]),
            torch.from_numpy(batch["attention_mask"]),
            mask_positions=torch.from_numpy(batch["mask_positions"]),
        )
    torch.testing.assert_close(small, full[..., keep], rtol=0, atol=1e-5)
    assert all(new_id[k] == j for j, k in enumerate(keep))


def test_export_with_pruning(tiny_checkpoint, tiny_model, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = "今天天气很好，我们去公园散步。\n他说：“你好！”\n"
    (corpus / "a.txt").write_text(text, encoding="utf-8")
    out = tmp_path / "model"
    export_model(tiny_checkpoint, out, fp32=True, prune_corpus=corpus, log=lambda *_: None)
    vocab = read_vocab(out / "vocab.txt")
    expected = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *[c for c in text if not c.isspace()]}
    assert set(vocab) == expected
    manifest = json.loads((out / "model.json").read_text())
    assert manifest["architecture"]["vocab_size"] == len(vocab)
    assert manifest["special_tokens"] == {"pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4}
    assert manifest["source"]["vocab_pruning"]["source_vocab_size"] == len(tiny_model[1])
    # Same predictions over the kept tokens as the unpruned PyTorch model.
    full_index = {t: i for i, t in enumerate(tiny_model[1])}
    keep = [full_index[t] for t in vocab]
    batch = sample_batch(len(vocab), seed=5)
    (got,) = run_onnx(out / "model.onnx", [batch])
    with torch.no_grad():
        full = tiny_model[0](
            torch.from_numpy(np.vectorize(lambda i: keep[i])(batch["input_ids"])),
            torch.from_numpy(batch["attention_mask"]),
            mask_positions=torch.from_numpy(batch["mask_positions"]),
        )[..., keep].numpy()
    np.testing.assert_allclose(got, full, atol=2e-4, rtol=0)
