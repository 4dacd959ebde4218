"""Vocabulary pruning: keep the tokens a corpus actually uses (plus the specials), remap
the word embeddings and the MLM bias. The decoder is tied, so one slice shrinks both ends
of the model (bert-base-chinese on the project corpus: 21 128 → 7 145 rows, −10.9 MB INT8)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import torch

from .bert import BertConfig, BertForMaskedLM
from .vocab import SPECIAL_TOKENS, write_vocab

REPO_ROOT = Path(__file__).resolve().parents[2]
COUNT_TOKENS = REPO_ROOT / "model" / "tooling" / "count-tokens.mjs"


def corpus_files(corpus_dir: str | Path) -> list[Path]:
    """The *.txt files of a corpus directory, sorted; raises ValueError if there are none."""
    directory = Path(corpus_dir)
    files = sorted(directory.glob("*.txt")) if directory.is_dir() else []
    if not files:
        raise ValueError(
            f"{corpus_dir}: no *.txt corpus files (expected a directory of *.txt files such as the raw data's corpus/)"
        )
    return files


def count_tokens(vocab: list[str], lowercase: bool, files: list[Path], work_dir: Path) -> np.ndarray:
    """Occurrences of each vocab id over `files`, tokenized by HF's reference tokenizer
    (npm `tokenizers`, through model/tooling/count-tokens.mjs)."""
    vocab_path = work_dir / "count-vocab.txt"
    write_vocab(vocab, vocab_path)
    result = subprocess.run(
        ["node", str(COUNT_TOKENS), str(vocab_path), str(lowercase).lower(), *map(str, files)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    if result.returncode != 0:
        raise RuntimeError(f"token counting failed ({COUNT_TOKENS.name}):\n{result.stderr}")
    return np.asarray(json.loads(result.stdout)["counts"])


def kept_token_ids(vocab: list[str], counts: np.ndarray, min_count: int = 1) -> list[int]:
    """Ids (ascending, so the vocab keeps its order) occurring ≥ min_count times, plus the
    five specials."""
    specials = set(SPECIAL_TOKENS.values())
    return [i for i, token in enumerate(vocab) if counts[i] >= min_count or token in specials]


def prune_model(model: BertForMaskedLM, vocab: list[str], keep: list[int]) -> tuple[BertForMaskedLM, list[str]]:
    """A copy of `model` whose vocabulary is `keep` (old ids, ascending): new id i is old id
    keep[i]. Logits of kept tokens are unchanged."""
    config = BertConfig(**{**model.config.__dict__, "vocab_size": len(keep)})
    index = torch.tensor(keep, dtype=torch.long)
    state = model.state_dict()
    for key in ("bert.embeddings.word_embeddings.weight", "cls.predictions.decoder.weight"):
        state[key] = state[key][index].clone()
    for key in ("cls.predictions.bias", "cls.predictions.decoder.bias"):
        state[key] = state[key][index].clone()
    pruned = BertForMaskedLM(config)
    pruned.load_state_dict(state)
    return pruned.eval(), [vocab[i] for i in keep]
