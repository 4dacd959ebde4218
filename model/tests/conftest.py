"""Shared fixtures: a seeded tiny checkpoint, its exports, and a bridge to run ONNX models in
onnxruntime-node / onnxruntime-web (Node subprocess: no onnxruntime Python package here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tiankong_model.checkpoint import save_checkpoint  # noqa: E402
from tiankong_model.random_checkpoint import random_model  # noqa: E402
from tiankong_model.tiny_vocab import tiny_vocab  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN_ONNX = REPO_ROOT / "model" / "tooling" / "run-onnx.mjs"


def run_onnx(model_path: Path, batches: list[dict], runtime: str = "node", threads: int = 1) -> list[np.ndarray]:
    """Logits of `model_path` for each batch of int64 feeds (name -> rows), run by onnxruntime
    in Node. Feeds the model does not declare are ignored."""
    request = {
        "model": str(model_path),
        "runtime": runtime,
        "threads": threads,
        "batches": [{k: np.asarray(v).tolist() for k, v in b.items()} for b in batches],
    }
    result = subprocess.run(
        ["node", str(RUN_ONNX)], input=json.dumps(request), capture_output=True, text=True, cwd=REPO_ROOT, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return [np.asarray(r["data"], dtype=np.float32).reshape(r["dims"]) for r in json.loads(result.stdout)["results"]]


@pytest.fixture(scope="session")
def tiny_model():
    """(model, vocab) of the tiny architecture, seed 0, with non-zero biases and LayerNorm
    parameters so export bugs that only show with trained-looking weights are not hidden."""
    vocab = tiny_vocab()
    model = random_model("tiny", len(vocab), seed=0)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("bias"):
                param.copy_(torch.randn(param.shape, generator=generator) * 0.1)
            elif "LayerNorm.weight" in name:
                param.copy_(1 + torch.randn(param.shape, generator=generator) * 0.1)
            elif param.dim() == 2:  # larger weights give larger logit margins, as training does
                param.mul_(4)
    return model, vocab


@pytest.fixture(scope="session")
def tiny_checkpoint(tiny_model, tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("tiny-checkpoint")
    save_checkpoint(*tiny_model, directory, formats=("safetensors",))
    return directory


def sample_batch(vocab_size: int, seed: int, batch: int = 3, seq: int = 12, n_masks: int = 2) -> dict:
    """A padded int64 batch: [CLS]=2 ... [SEP]=3 with random tokens, decreasing lengths,
    distinct mask positions inside each row (tiny vocab ids)."""
    rng = np.random.default_rng(seed)
    input_ids = np.zeros((batch, seq), dtype=np.int64)
    attention_mask = np.zeros((batch, seq), dtype=np.int64)
    mask_positions = np.zeros((batch, n_masks), dtype=np.int64)
    for row in range(batch):
        length = seq - 2 * row
        input_ids[row, :length] = rng.integers(5, vocab_size, length)
        input_ids[row, 0], input_ids[row, length - 1] = 2, 3
        attention_mask[row, :length] = 1
        mask_positions[row] = np.sort(rng.choice(np.arange(1, length - 1), n_masks, replace=False))
        input_ids[row, mask_positions[row]] = 4
    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "token_type_ids": np.zeros((batch, seq), dtype=np.int64),
        "mask_positions": mask_positions,
    }
