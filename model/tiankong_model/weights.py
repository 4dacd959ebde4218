"""Weights-only checkpoints: the committed training checkpoint (bf16) and a GPU run's output (fp16).

A folder holds config.json, vocab.txt, training_state.json (step, tokens, epoch, recipe, ...) and
the weights as safetensors in Hugging Face's layout: one `model.safetensors`, or when it would
exceed `max_file_bytes`, shards `model-0000K-of-0000N.safetensors` with
`model.safetensors.index.json` mapping each tensor to its shard (HF's sharded format, so
`checkpoint.load_checkpoint` and HF tools read it too). Tied duplicates are stored once.

Writes are atomic per folder (temp folder, then rename): an interrupted save leaves the old one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch

from .safetensors import load_safetensors, save_safetensors

SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"
MAX_FILE_BYTES = 16 * 1024 * 1024
_TIED = ("cls.predictions.decoder.weight", "cls.predictions.decoder.bias")


def _shards(tensors: dict[str, torch.Tensor], max_bytes: int) -> list[dict[str, torch.Tensor]]:
    """Groups tensors (in name order) into shards whose file (data + JSON header, counted
    generously at 256 bytes per tensor) stays within `max_bytes`. Raises ValueError if one tensor
    alone does not fit."""
    header = 256
    shards: list[dict[str, torch.Tensor]] = [{}]
    used = 8 + header
    for name in sorted(tensors):
        size = tensors[name].numel() * tensors[name].element_size() + header
        if 8 + header + size > max_bytes:
            raise ValueError(f"tensor {name} ({size} bytes) does not fit in a {max_bytes}-byte file")
        if used + size > max_bytes and shards[-1]:
            shards.append({})
            used = 8 + header
        shards[-1][name] = tensors[name]
        used += size
    return shards


def save_weights_dir(
    model,
    vocab: list[str] | None,
    state: dict,
    out_dir: Path,
    dtype: torch.dtype = torch.bfloat16,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> list[str]:
    """Writes `model`'s weights in `dtype` plus config, `state` and (unless None) the vocab to
    `out_dir` (replacing it); returns the file names written."""
    out_dir = Path(out_dir)
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    tensors = {
        k: v.detach().to("cpu", dtype).contiguous().clone() for k, v in model.state_dict().items() if k not in _TIED
    }
    shards = _shards(tensors, max_file_bytes)
    files = ["config.json", "training_state.json"]
    (tmp / "config.json").write_text(json.dumps(model.config.to_hf_dict(), indent=2) + "\n")
    if vocab is not None:
        (tmp / "vocab.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
        files.append("vocab.txt")
    (tmp / "training_state.json").write_text(json.dumps(state, indent=2) + "\n")
    if len(shards) == 1:
        save_safetensors(shards[0], tmp / SINGLE_FILE, metadata={"format": "pt"})
        files.append(SINGLE_FILE)
    else:
        weight_map = {}
        for k, shard in enumerate(shards, 1):
            name = f"model-{k:05d}-of-{len(shards):05d}.safetensors"
            save_safetensors(shard, tmp / name, metadata={"format": "pt"})
            weight_map.update({t: name for t in shard})
            files.append(name)
        total = sum(t.numel() * t.element_size() for t in tensors.values())
        (tmp / INDEX_FILE).write_text(
            json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2, sort_keys=True) + "\n"
        )
        files.append(INDEX_FILE)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    tmp.rename(out_dir)
    return files


def load_weights_dir(directory: Path) -> dict[str, torch.Tensor]:
    """The float32 tensors of a weights folder (single file or HF shards). Raises ValueError naming
    the folder when no weights are there or a shard named by the index is missing."""
    directory = Path(directory)
    if (directory / SINGLE_FILE).is_file():
        raw = load_safetensors(directory / SINGLE_FILE)
    elif (directory / INDEX_FILE).is_file():
        index = json.loads((directory / INDEX_FILE).read_text())
        raw = {}
        for shard in sorted(set(index["weight_map"].values())):
            if not (directory / shard).is_file():
                raise ValueError(f"{directory}: shard {shard} named by {INDEX_FILE} is missing")
            raw.update(load_safetensors(directory / shard))
        missing = set(index["weight_map"]) - set(raw)
        if missing:
            raise ValueError(f"{directory}: tensors {sorted(missing)} named by {INDEX_FILE} are in no shard")
    else:
        raise ValueError(f"{directory}: no {SINGLE_FILE} or {INDEX_FILE}")
    return {k: v.float() for k, v in raw.items()}


def tokens_seen(checkpoint_dir: str | Path) -> int | None:
    """Tokens a training checkpoint (local or weights-only) has seen, from its training_state.json;
    None when the directory has none."""
    state_file = Path(checkpoint_dir) / "training_state.json"
    if not state_file.is_file():
        return None
    return json.loads(state_file.read_text()).get("tokens_seen", 0)
