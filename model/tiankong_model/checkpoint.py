"""Hugging Face BERT checkpoints: load `pytorch_model.bin` / `model.safetensors` into
`BertForMaskedLM`, and save in exactly the layout `transformers` writes.

A checkpoint directory holds config.json, vocab.txt, optional tokenizer_config.json and
the weights (model.safetensors preferred over pytorch_model.bin when both exist, as HF does).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from .bert import BertConfig, BertForMaskedLM
from .safetensors import save_safetensors
from .vocab import read_vocab, special_token_ids, write_vocab
from .weights import INDEX_FILE as INDEX_NAME
from .weights import load_weights_dir, save_weights_dir

BIN_NAME = "pytorch_model.bin"
SAFETENSORS_NAME = "model.safetensors"

# Keys HF checkpoints carry that this MLM does not use (pooler, NSP head, the position-id
# buffer older versions saved).
_IGNORED_KEYS = re.compile(r"^(bert\.pooler\..*|cls\.seq_relationship\..*|bert\.embeddings\.position_ids)$")
# The decoder is tied to the word embeddings and its bias is `cls.predictions.bias`:
# files may or may not store these duplicates (HF's safetensors never does).
_TIED_KEYS = {
    "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
    "cls.predictions.decoder.bias": "cls.predictions.bias",
}
# TF-converted checkpoints (bert-base-chinese's original .bin among them) name LayerNorm
# parameters gamma/beta.
_LEGACY_SUFFIXES = {"LayerNorm.gamma": "LayerNorm.weight", "LayerNorm.beta": "LayerNorm.bias"}


class CheckpointError(ValueError):
    """A checkpoint directory or file that cannot be loaded, with the reason."""


def read_weights(checkpoint_dir: str | Path) -> dict[str, torch.Tensor]:
    """The raw tensors of a checkpoint directory's weight file (safetensors first, also HF's
    sharded model-0000K-of-0000N.safetensors with its index)."""
    directory = Path(checkpoint_dir)
    if (directory / SAFETENSORS_NAME).is_file() or (directory / INDEX_NAME).is_file():
        try:
            return load_weights_dir(directory)
        except ValueError as err:
            raise CheckpointError(str(err)) from None
    if (directory / BIN_NAME).is_file():
        state = torch.load(directory / BIN_NAME, map_location="cpu")
        if not isinstance(state, dict):
            raise CheckpointError(f"{directory / BIN_NAME}: expected a state dict, found {type(state).__name__}")
        return state
    raise CheckpointError(f"{directory}: no {SAFETENSORS_NAME} or {BIN_NAME}")


def normalize_state_dict(raw: dict[str, torch.Tensor], expected: set[str]) -> dict[str, torch.Tensor]:
    """Maps an HF state dict onto the canonical key set `expected` (the untied keys of
    `BertForMaskedLM.state_dict()`): renames legacy LayerNorm gamma/beta, drops known
    unused and tied-duplicate keys, converts to float32.

    Raises CheckpointError listing every unknown and every missing key."""
    state, unknown = {}, []
    for key, tensor in raw.items():
        for old, new in _LEGACY_SUFFIXES.items():
            if key.endswith(old):
                key = key[: -len(old)] + new
        if key in expected:
            state[key] = tensor
        elif key in _TIED_KEYS:
            state.setdefault(f"tied:{_TIED_KEYS[key]}", tensor)
        elif not _IGNORED_KEYS.match(key):
            unknown.append(key)
    # A file that stores only the duplicate (e.g. decoder.bias without predictions.bias) is still complete.
    for key in _TIED_KEYS.values():
        duplicate = state.pop(f"tied:{key}", None)
        if key not in state and duplicate is not None:
            state[key] = duplicate
    missing = sorted(expected - state.keys())
    if unknown or missing:
        lines = []
        if unknown:
            lines.append(f"unknown keys ({len(unknown)}): {', '.join(sorted(unknown))}")
        if missing:
            lines.append(f"missing keys ({len(missing)}): {', '.join(missing)}")
        raise CheckpointError("checkpoint does not match BertForMaskedLM:\n  " + "\n  ".join(lines))
    return {k: v.float() if v.is_floating_point() else v for k, v in state.items()}


def canonical_keys(model: BertForMaskedLM) -> set[str]:
    """State-dict keys a checkpoint must provide (the tied duplicates excluded)."""
    return set(model.state_dict()) - set(_TIED_KEYS)


def load_checkpoint(checkpoint_dir: str | Path) -> tuple[BertForMaskedLM, list[str]]:
    """Loads an HF BERT checkpoint directory into an eval-mode `BertForMaskedLM` and its
    vocab (token list in id order).

    Raises CheckpointError for a missing file, mismatched keys or shapes, or a vocab.txt
    whose length differs from config.vocab_size."""
    directory = Path(checkpoint_dir)
    for name in ("config.json", "vocab.txt"):
        if not (directory / name).is_file():
            raise CheckpointError(f"{directory}: no {name} (is this a Hugging Face BERT checkpoint directory?)")
    config = BertConfig.from_json_file(directory / "config.json")
    vocab = read_vocab(directory / "vocab.txt")
    if len(vocab) != config.vocab_size:
        raise CheckpointError(
            f"{directory}: vocab.txt has {len(vocab)} tokens but config.json says vocab_size {config.vocab_size}"
        )
    special_token_ids(vocab)
    model = BertForMaskedLM(config)
    state = normalize_state_dict(read_weights(directory), canonical_keys(model))
    own = model.state_dict()
    wrong = [
        f"{k}: file {tuple(v.shape)} vs model {tuple(own[k].shape)}"
        for k, v in sorted(state.items())
        if v.shape != own[k].shape
    ]
    if wrong:
        raise CheckpointError(f"{directory}: tensor shapes do not match config.json:\n  " + "\n  ".join(wrong))
    model.load_state_dict(state, strict=False)  # the tied duplicates follow their sources
    return model.eval(), vocab


def read_lowercase(checkpoint_dir: str | Path) -> bool:
    """`do_lower_case` from tokenizer_config.json; False when absent (Chinese BERTs do not lowercase)."""
    path = Path(checkpoint_dir) / "tokenizer_config.json"
    if not path.is_file():
        return False
    return bool(json.loads(path.read_text(encoding="utf-8")).get("do_lower_case", False))


def hf_config_json(config: BertConfig) -> str:
    """config.json as `transformers` writes it for BertForMaskedLM (sorted keys, indent 2)."""
    fields = {
        **config.to_hf_dict(),
        "attention_probs_dropout_prob": 0.1,
        "hidden_dropout_prob": 0.1,
        "classifier_dropout": None,
        "position_embedding_type": "absolute",
        "torch_dtype": "float32",
        "use_cache": True,
    }
    return json.dumps(fields, indent=2, sort_keys=True) + "\n"


def save_checkpoint(
    model: BertForMaskedLM,
    vocab: list[str],
    out_dir: str | Path,
    formats: tuple[str, ...] = ("safetensors",),
    lowercase: bool = False,
) -> None:
    """Writes an HF checkpoint directory: config.json, vocab.txt, tokenizer_config.json and
    `pytorch_model.bin` ("bin", full state dict as torch.save writes it) and/or
    `model.safetensors` ("safetensors", tied duplicates dropped as HF does)."""
    if len(vocab) != model.config.vocab_size:
        raise ValueError(f"vocab has {len(vocab)} tokens, model vocab_size is {model.config.vocab_size}")
    unknown = set(formats) - {"bin", "safetensors"}
    if unknown or not formats:
        raise ValueError(f"formats must be a non-empty subset of ('bin', 'safetensors'), got {formats}")
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(hf_config_json(model.config), encoding="utf-8")
    write_vocab(vocab, directory / "vocab.txt")
    tokenizer_config = {
        "do_lower_case": lowercase,
        "tokenizer_class": "BertTokenizer",
        "model_max_length": model.config.max_position_embeddings,
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
        "tokenize_chinese_chars": True,
        "strip_accents": None,
    }
    (directory / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n", encoding="utf-8")
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    if "bin" in formats:
        torch.save(state, directory / BIN_NAME)
    if "safetensors" in formats:
        untied = {k: v.clone() for k, v in state.items() if k not in _TIED_KEYS}
        save_safetensors(untied, directory / SAFETENSORS_NAME, metadata={"format": "pt"})


def save_weights_only(checkpoint_dir: str | Path, out_dir: str | Path) -> tuple[list[str], int]:
    """Writes a training checkpoint in the committed weights-only form (bf16 safetensors, config,
    vocab and its training_state.json, which scripts/train-default-model continues from) to
    `out_dir`, replacing it; returns (file names, total bytes). Used for a release's
    model/default/checkpoint and for model/progress/checkpoint."""
    checkpoint_dir, out_dir = Path(checkpoint_dir), Path(out_dir)
    model, vocab = load_checkpoint(checkpoint_dir)
    state = json.loads((checkpoint_dir / "training_state.json").read_text())
    files = save_weights_dir(model, vocab, state, out_dir, dtype=torch.bfloat16)
    return files, sum((out_dir / f).stat().st_size for f in files)
