"""Training pieces (model/tiankong_model/train.py): row packing, whole-word masking, the schedule,
position-code init, and a short run on a synthetic corpus that learns, checkpoints and resumes."""
from __future__ import annotations

import json

import numpy as np
import torch

from tiankong_model.checkpoint import load_checkpoint
from tiankong_model.train import Corpus, Masker, learning_rate, main, pack_sequences, sinusoidal_positions

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##b", "c", "d", "e", "f", "g", "h"]
PAD, UNK, CLS, SEP, MASK = range(5)


def write_corpus(directory, split, lines):
    """The layout scripts/build-corpus writes: flat uint16 ids + uint32 line offsets."""
    ids = np.concatenate([np.asarray(line, dtype=np.uint16) for line in lines])
    offsets = np.cumsum([0] + [len(line) for line in lines]).astype(np.uint32)
    ids.tofile(directory / f"{split}.ids")
    offsets.tofile(directory / f"{split}.idx")


def test_rows_start_at_line_starts_and_long_lines_are_split(tmp_path):
    write_corpus(tmp_path, "train", [[5, 7], [8, 9, 10], list(range(5, 13)) * 2])
    corpus = Corpus(tmp_path, "train")
    rows = pack_sequences(corpus, np.arange(corpus.num_lines), 8, CLS, SEP, PAD)
    assert rows.tolist() == [
        [CLS, 5, 7, SEP, 8, 9, 10, SEP],
        [CLS, 5, 6, 7, 8, 9, 10, SEP],  # the 16-token line in pieces of seq_len - 2
        [CLS, 11, 12, 5, 6, 7, 8, SEP],
        [CLS, 9, 10, 11, 12, SEP, PAD, PAD],
    ]


def test_masking_picks_whole_words_at_the_rate_and_never_specials():
    masker = Masker(VOCAB)
    gen = torch.Generator().manual_seed(0)
    # "a##b" is one word: its two pieces are selected together or not at all.
    row = [CLS] + [5, 6, 7, 8, 9, 10, 11, 12] * 60 + [SEP]
    ids = torch.tensor([row] * 64)
    inputs, positions, targets = masker(ids, gen)
    flat_ids, flat_inputs = ids.flatten(), inputs.flatten()
    selected = torch.zeros_like(flat_ids, dtype=torch.bool)
    selected[positions] = True
    assert torch.equal(targets, flat_ids[positions])
    assert not selected[(flat_ids == CLS) | (flat_ids == SEP)].any()
    a_at = (flat_ids == 5).nonzero().squeeze(1)
    assert torch.equal(selected[a_at], selected[a_at + 1])
    word_starts = (flat_ids >= 5) & (flat_ids != 6)
    assert abs(selected[word_starts].float().mean().item() - 0.15) < 0.01
    changed = flat_inputs[positions]
    share_masked = (changed == MASK).float().mean().item()
    share_kept = (changed == flat_ids[positions]).float().mean().item()
    assert abs(share_masked - 0.8) < 0.02 and 0.09 < share_kept < 0.13  # kept: 10% + random draws of itself
    assert torch.equal(flat_inputs[~selected], flat_ids[~selected])
    replaced = changed[(changed != MASK) & (changed != flat_ids[positions])]
    assert len(replaced) > 0 and not ((replaced == 6) | (replaced < 5)).any()  # never ## pieces or specials


def test_schedule_warms_up_then_decays_to_a_tenth():
    assert learning_rate(0.0, 1.0, 0.1) == 0.0
    assert learning_rate(0.05, 1.0, 0.1) == 0.5
    assert learning_rate(0.1, 1.0, 0.1) == 1.0
    assert abs(learning_rate(1.0, 1.0, 0.1) - 0.1) < 1e-12
    values = [learning_rate(p / 100, 1.0, 0.1) for p in range(10, 101)]
    assert all(a >= b for a, b in zip(values, values[1:]))


def test_position_codes_have_the_scale_and_favour_neighbours():
    codes = sinusoidal_positions(128, 64, 0.02)
    assert abs(codes.std().item() - 0.02) < 1e-6
    similarity = codes[60] @ codes.T
    assert similarity[60] > similarity[61] > similarity[63] > similarity[70]


def test_training_learns_a_deterministic_corpus_and_resumes(tmp_path):
    # Each line is a fixed 6-token pattern: the masked token is predictable from its neighbours.
    corpus_dir, out = tmp_path / "corpus", tmp_path / "out"
    corpus_dir.mkdir()
    (corpus_dir / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    rng = np.random.default_rng(0)
    patterns = [[5, 6, 7, 8, 9, 10], [11, 12, 7, 9, 8, 10]]
    write_corpus(corpus_dir, "train", [patterns[i % 2] for i in rng.integers(0, 2, 400)])
    write_corpus(corpus_dir, "val", [patterns[0], patterns[1]] * 20)
    common = ["--corpus", str(corpus_dir), "--out", str(out), "--layers", "1", "--hidden", "32", "--heads", "2",
              "--ffn", "64", "--seq-len", "16", "--batch", "16", "--lr", "3e-3", "--threads", "1", "--hours", "1", "--warmup", "0"]
    assert main(common + ["--max-steps", "150"]) == 0
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    final = [e for e in log if e.get("final")][-1]
    assert final["step"] == 150 and final["val_top1"] > 0.6
    state = json.loads((out / "checkpoint" / "training_state.json").read_text())
    assert state["step"] == 150 and state["tokens_seen"] > 0
    model, vocab = load_checkpoint(out / "checkpoint")  # an ordinary HF-format checkpoint
    assert vocab == VOCAB and model.config.num_hidden_layers == 1 and model.config.hidden_size == 32

    assert main(common + ["--max-steps", "170"]) == 0  # resumes: 20 more steps, not 170
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [e["step"] for e in log if e.get("final")] == [150, 170]
    assert json.loads((out / "checkpoint" / "training_state.json").read_text())["tokens_seen"] > state["tokens_seen"]
