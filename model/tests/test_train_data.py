"""Training data (model/tiankong_model/train_data.py): oversampling, row packing, whole-word and
span masking."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiankong_model.train_data import (
    Corpus,
    Masker,
    add_idiom_heads,
    epoch_order,
    pack_sequences,
    parse_oversampling,
    single_line_rows,
)

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##b", "c", "d", "e", "f", "g", "h"]
PAD, UNK, CLS, SEP, MASK = range(5)


def write_corpus(directory, split, lines, sources=None):
    """The layout scripts/build-corpus writes: flat uint16 ids + uint32 line offsets + uint8 sources."""
    ids = np.concatenate([np.asarray(line, dtype=np.uint16) for line in lines])
    offsets = np.cumsum([0] + [len(line) for line in lines]).astype(np.uint32)
    ids.tofile(directory / f"{split}.ids")
    offsets.tofile(directory / f"{split}.idx")
    if sources is not None:
        np.asarray(sources, dtype=np.uint8).tofile(directory / f"{split}.src")


def reference_pack(corpus, order, seq_len):
    """Straightforward greedy packing, the oracle for the vectorised pack_sequences."""
    body, rows, current = seq_len - 2, [], []
    for i in order:
        line = list(corpus.line(int(i)))
        for start in range(0, len(line), body):
            piece = line[start : start + body] + [SEP]
            if len(current) + len(piece) > seq_len - 1:
                rows.append(current)
                current = []
            current += piece
    if current:
        rows.append(current)
    return [[CLS] + r + [PAD] * (seq_len - 1 - len(r)) for r in rows]


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


def test_vectorised_packing_matches_the_reference(tmp_path):
    rng = np.random.default_rng(3)
    lines = [list(rng.integers(5, 13, rng.integers(0, 40))) for _ in range(300)]
    lines[0] = [5]  # and some empty ones from integers(0, ...)
    write_corpus(tmp_path, "train", [line for line in lines if line] + [[]] * 0)
    corpus = Corpus(tmp_path, "train")
    order = rng.permutation(corpus.num_lines)
    for seq_len in (8, 16, 64):
        assert pack_sequences(corpus, order, seq_len, CLS, SEP, PAD).tolist() == reference_pack(corpus, order, seq_len)


def test_single_line_rows(tmp_path):
    write_corpus(tmp_path, "val", [[5, 7], list(range(5, 13))])
    rows = single_line_rows(Corpus(tmp_path, "val"), np.array([1, 0]), 6, CLS, SEP, PAD)
    assert rows.tolist() == [[CLS, 5, 6, 7, 8, SEP], [CLS, 5, 7, SEP, PAD, PAD]]


def test_oversampling_repeats_sources_by_weight(tmp_path):
    write_corpus(tmp_path, "train", [[5]] * 1000 + [[7]] * 100, sources=[0] * 1000 + [1] * 100)
    corpus = Corpus(tmp_path, "train")
    order = epoch_order(
        corpus, ["poetry", "tatoeba"], parse_oversampling("tatoeba=4, poetry=0.5"), np.random.default_rng(0)
    )
    counts = np.bincount(corpus.sources[order])
    assert counts[1] == 400 and 430 < counts[0] < 570
    assert len(set(order.tolist())) < len(order)  # repeats, shuffled together
    plain = epoch_order(corpus, ["poetry", "tatoeba"], {"wiki": 2}, np.random.default_rng(0))
    assert sorted(plain.tolist()) == list(range(1100))  # a weight for a missing source changes nothing
    with pytest.raises(ValueError, match="NAME=WEIGHT"):
        parse_oversampling("tatoeba")


def test_idiom_heads_repeat_each_idiom_alone(tmp_path):
    colon = 12  # stands for "："
    lines = [[5, 7, 8, 9, colon, 10, 11], [7, 8], [9, 10, colon, 5], [colon, 5], [5] * 20 + [colon]]
    write_corpus(tmp_path, "train", lines, sources=[0, 1, 0, 0, 0])
    corpus = Corpus(tmp_path, "train")
    names = add_idiom_heads(corpus, ["idioms", "poetry"], colon)
    assert names == ["idioms", "poetry", "idiom-heads"]
    # Idioms of 2..12 tokens before the first "：", in corpus order; the originals stay as they were.
    assert [corpus.line(i).tolist() for i in range(corpus.num_lines)] == lines + [[5, 7, 8, 9], [9, 10]]
    assert corpus.sources.tolist() == [0, 1, 0, 0, 0, 2, 2]
    order = epoch_order(corpus, names, parse_oversampling("idiom-heads=2"), np.random.default_rng(0))
    assert np.bincount(order).tolist() == [1, 1, 1, 1, 1, 2, 2]
    assert add_idiom_heads(corpus, names, colon) == names  # once only
    assert add_idiom_heads(corpus, ["poetry"], colon) == ["poetry"]  # no idioms source: nothing to add


def test_spans_are_masked_whole_and_stay_inside_a_line():
    masker = Masker(VOCAB)
    gen = torch.Generator().manual_seed(1)
    row = ([CLS] + ([7, 8, 9, 10, 11, 12, 7, 8] * 4 + [SEP]) * 4)[:128]
    ids = torch.tensor([row] * 64)
    inputs, positions, targets = masker(ids, gen, rate=0.3, span_share=1.0)
    selected = torch.zeros(ids.numel(), dtype=torch.bool)
    selected[positions] = True
    selected = selected.view(ids.shape)
    content = ids >= 5
    # The rate counts tokens, spans included (a little under: overlapping spans and line ends).
    assert 0.25 < selected[content].float().mean().item() <= 0.3
    # Runs of selected tokens: spans of 2-4 (or longer where two touch), never across [SEP].
    assert not selected[ids == SEP].any()
    lengths = []
    for r in selected.tolist():
        run = 0
        for s in r + [False]:
            if s:
                run += 1
            elif run:
                lengths.append(run)
                run = 0
    assert min(lengths) >= 1 and np.mean(lengths) > 2.2
    assert max(lengths) <= 32  # a line holds 32 tokens


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
