"""Training data for the default model: the corpus scripts/build-corpus writes, how an epoch
samples it, how lines become packed rows, and how rows are masked.

Choices, and why (model/default/README.md has the probe numbers):
- oversampling by source: classical poetry is ~83% of the corpus; modern text (tatoeba, wiki,
  novels, idiom explanations) is repeated within an epoch so it is not drowned out;
- idiom heads (source "idiom-heads", when the recipe's oversampling names it): each training
  line "成语：解释" also gives its idiom alone as a line, because users type an idiom alone (the
  app's idiom chip) and the corpus only ever shows one followed by "：";
- rows of up to 128 tokens, [CLS] line [SEP] line [SEP] ..., always starting at a line start (as
  inference inputs do); a line longer than a row is split;
- masking rate scheduled by the caller (high early, 15% late: Wettig et al. 2023, Ankner et al.
  2023); a share of the masked units are spans of 2-4 characters masked whole (idioms, words);
  whole-word masking (a Latin word's ## pieces go together); 80% [MASK] / 10% random / 10% kept.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class Corpus:
    """Token ids of one split, as written by scripts/build-corpus: uint16 ids, uint32 line offsets
    and (when present) one uint8 source index per line (into stats.json's "sources")."""

    def __init__(self, directory: Path, split: str):
        self.ids = np.fromfile(directory / f"{split}.ids", dtype=np.uint16)
        self.offsets = np.fromfile(directory / f"{split}.idx", dtype=np.uint32).astype(np.int64)
        src = directory / f"{split}.src"
        self.sources = np.fromfile(src, dtype=np.uint8) if src.exists() else np.zeros(self.num_lines, np.uint8)
        if len(self.sources) != self.num_lines:
            raise ValueError(f"{src}: {len(self.sources)} source entries for {self.num_lines} lines")

    def append_lines(self, lines: list[np.ndarray], source: int) -> None:
        """Adds `lines` (token id arrays) at the end, all from source index `source`."""
        lengths = np.array([len(line) for line in lines], dtype=np.int64)
        self.offsets = np.concatenate([self.offsets, self.offsets[-1] + np.cumsum(lengths)])
        self.ids = np.concatenate([self.ids, *[np.asarray(line, dtype=np.uint16) for line in lines]])
        self.sources = np.concatenate([self.sources, np.full(len(lines), source, dtype=np.uint8)])

    @property
    def num_lines(self) -> int:
        return len(self.offsets) - 1

    def line(self, i: int) -> np.ndarray:
        return self.ids[self.offsets[i] : self.offsets[i + 1]]


def parse_oversampling(spec: str) -> dict[str, float]:
    """ "tatoeba=4,wiki=4" -> {"tatoeba": 4.0, "wiki": 4.0}; raises ValueError for a bad entry."""
    weights = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"oversampling entry {item!r} is not NAME=WEIGHT")
        weight = float(value)
        if not 0 <= weight <= 100:
            raise ValueError(f"oversampling weight of {name!r} must be in 0..100, got {value}")
        weights[name] = weight
    return weights


IDIOM_HEADS = "idiom-heads"


def add_idiom_heads(corpus: Corpus, source_names: list[str], separator_id: int, max_len: int = 12) -> list[str]:
    """For each line of source "idioms" that reads "成语：解释" (separator_id is "："), appends the
    idiom alone (2..max_len tokens) as a line of a new source "idiom-heads"; returns the source
    names with it added. Nothing is added (same names back) when the corpus has no idioms source."""
    if "idioms" not in source_names or IDIOM_HEADS in source_names:
        return source_names
    idioms = source_names.index("idioms")
    heads = []
    for i in np.nonzero(corpus.sources == idioms)[0]:
        line = corpus.line(int(i))
        cut = np.nonzero(line == separator_id)[0]
        if len(cut) and 2 <= cut[0] <= max_len:
            heads.append(line[: cut[0]].copy())
    if heads:
        corpus.append_lines(heads, len(source_names))
    return [*source_names, IDIOM_HEADS]


def epoch_order(
    corpus: Corpus, source_names: list[str], weights: dict[str, float], rng: np.random.Generator
) -> np.ndarray:
    """Line indices of one epoch, shuffled: each line of source s appears floor(w) times, plus once
    more with probability frac(w) (w = weights.get(s, 1)), so a weight of 4 repeats a source 4×.
    Weights of sources this corpus lacks are ignored (the default recipe names the project's sources)."""
    per_line = np.array([weights.get(name, 1.0) for name in source_names], dtype=np.float64)[corpus.sources]
    repeats = np.floor(per_line).astype(np.int64)
    repeats += rng.random(len(per_line)) < (per_line - repeats)
    order = np.repeat(np.arange(corpus.num_lines), repeats)
    return order[rng.permutation(len(order))]


def pack_sequences(
    corpus: Corpus, order: np.ndarray, seq_len: int, cls_id: int, sep_id: int, pad_id: int
) -> np.ndarray:
    """Packs lines (in `order`) into rows of `seq_len` ids: [CLS] a [SEP] b [SEP] ... [PAD]*.

    Every row starts at the beginning of a line (or of a piece of a line longer than a row). A
    line that does not fit in the remaining space starts the next row; a line longer than a row
    is split into row-sized pieces. The greedy placement loops over lengths only; the tokens are
    then copied with one vectorised scatter (an epoch of 500 k lines packs in about a second).
    """
    body = seq_len - 2  # room for [CLS] and a final [SEP]
    order = np.asarray(order, dtype=np.int64)
    lengths = corpus.offsets[order + 1] - corpus.offsets[order]
    order, lengths = order[lengths > 0], lengths[lengths > 0]
    # Split long lines into pieces of at most `body` tokens: (line, start, length) per piece.
    pieces_per_line = (lengths + body - 1) // body
    piece_line = np.repeat(order, pieces_per_line)
    first_piece = np.repeat(np.cumsum(pieces_per_line) - pieces_per_line, pieces_per_line)
    piece_start = (np.arange(len(piece_line)) - first_piece) * body
    piece_len = np.minimum(np.repeat(lengths, pieces_per_line) - piece_start, body)
    # Greedy rows: each piece takes len + 1 slots (its [SEP]); a row holds seq_len - 1 after [CLS].
    piece_row = np.empty(len(piece_len), dtype=np.int64)
    piece_col = np.empty(len(piece_len), dtype=np.int64)
    row, used, room = 0, 0, seq_len - 1
    for i, n in enumerate(piece_len.tolist()):
        if used + n + 1 > room:
            row, used = row + 1, 0
        piece_row[i], piece_col[i] = row, 1 + used
        used += n + 1
    rows = np.full((row + 1 if len(piece_len) else 0, seq_len), pad_id, dtype=np.int64)
    if not len(piece_len):
        return rows
    rows[:, 0] = cls_id
    # Token scatter: every token of every piece, then each piece's [SEP].
    token_piece = np.repeat(np.arange(len(piece_len)), piece_len)
    within = np.arange(len(token_piece)) - np.repeat(np.cumsum(piece_len) - piece_len, piece_len)
    source_at = corpus.offsets[piece_line[token_piece]] + piece_start[token_piece] + within
    rows[piece_row[token_piece], piece_col[token_piece] + within] = corpus.ids[source_at]
    rows[piece_row, piece_col + piece_len] = sep_id
    return rows


def single_line_rows(
    corpus: Corpus, order: np.ndarray, seq_len: int, cls_id: int, sep_id: int, pad_id: int
) -> np.ndarray:
    """The lines of `order`, one per row: [CLS] line [SEP] [PAD]* (lines cut to fit). The
    validation rows: one sentence per input, as the product sees it."""
    rows = np.full((len(order), seq_len), pad_id, dtype=np.int64)
    for i, index in enumerate(order):
        line = corpus.line(int(index))[: seq_len - 2]
        rows[i, 0] = cls_id
        rows[i, 1 : 1 + len(line)] = line
        rows[i, 1 + len(line)] = sep_id
    return rows


class Masker:
    """Dynamic whole-word masking with optional spans.

    `rate` is the share of content tokens masked; `span_share` is the share of masked units that
    are spans (length 2, 3 or 4, equally likely) instead of single words. A span never crosses a
    special token ([SEP] between packed lines, [CLS], padding)."""

    SPAN_LENGTHS = (2, 3, 4)

    def __init__(self, vocab: list[str]):
        self.special = torch.tensor([t in SPECIALS for t in vocab])
        self.continuation = torch.tensor([t.startswith("##") for t in vocab])
        self.mask_id = vocab.index("[MASK]")
        # Random replacements are drawn from ordinary, whole-character tokens.
        self.replacement_ids = torch.tensor(
            [i for i, t in enumerate(vocab) if t not in SPECIALS and not t.startswith("##")]
        )

    def __call__(self, ids: torch.Tensor, generator: torch.Generator, rate: float = 0.15, span_share: float = 0.0):
        """Returns (inputs, target_positions [N] flat indices, targets [N])."""
        content = ~self.special[ids]
        continuation = self.continuation[ids] & content
        word_start = content & ~continuation
        # Mean unit length (in words) so that `rate` of the words end up masked.
        mean_span = sum(self.SPAN_LENGTHS) / len(self.SPAN_LENGTHS)
        unit_rate = rate / (1 - span_share + span_share * mean_span)
        chosen = word_start & (torch.rand(ids.shape, generator=generator) < unit_rate)
        if span_share > 0:
            is_span = torch.rand(ids.shape, generator=generator) < span_share
            length = torch.tensor(self.SPAN_LENGTHS)[
                torch.randint(len(self.SPAN_LENGTHS), ids.shape, generator=generator)
            ]
            length = torch.where(is_span & chosen, length, torch.ones_like(length))
            # Runs of content tokens: a span extends only inside its run.
            run_id = torch.cumsum((~content).to(torch.int64), dim=1)
            extended = chosen.clone()
            for k in range(1, max(self.SPAN_LENGTHS)):
                source = chosen[:, :-k] & (length[:, :-k] > k) & (run_id[:, :-k] == run_id[:, k:])
                extended[:, k:] |= source
            chosen = extended & content
        # Whole words: a word is selected when any of its tokens is.
        word_id = torch.cumsum(word_start.to(torch.int64), dim=1)
        chosen_word = torch.zeros(ids.shape[0], ids.shape[1] + 1, dtype=torch.bool)
        chosen_word.scatter_(1, torch.where(chosen, word_id, torch.zeros_like(word_id)), chosen)
        chosen_word[:, 0] = False
        selected = content & torch.gather(chosen_word, 1, word_id)

        inputs = ids.clone()
        action = torch.rand(ids.shape, generator=generator)
        to_mask = selected & (action < 0.8)
        to_random = selected & (action >= 0.8) & (action < 0.9)
        inputs[to_mask] = self.mask_id
        random_tokens = self.replacement_ids[torch.randint(len(self.replacement_ids), ids.shape, generator=generator)]
        inputs[to_random] = random_tokens[to_random]
        positions = torch.nonzero(selected.flatten(), as_tuple=False).squeeze(1)
        return inputs, positions, ids.flatten()[positions]
