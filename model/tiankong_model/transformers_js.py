"""The extra files that make a full-logits export loadable by transformers.js
(`AutoModelForMaskedLM` / `pipeline('fill-mask', dir)`): config.json, tokenizer.json,
tokenizer_config.json at the top, and the graph under onnx/ with the name transformers.js
picks for its dtype (model.onnx = fp32, model_quantized.onnx = "q8", its wasm default),
as a relative symlink to ../model.onnx so the weights exist once."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from .bert import BertConfig
from .checkpoint import hf_config_json

REPO_ROOT = Path(__file__).resolve().parents[2]
WRITE_TOKENIZER_JSON = REPO_ROOT / "model" / "tooling" / "write-tokenizer-json.mjs"


def write_transformers_js_files(out_dir: Path, config: BertConfig, lowercase: bool, quantized: bool) -> list[str]:
    """Writes the files next to model.onnx and vocab.txt (already in `out_dir`); returns
    their relative paths."""
    (out_dir / "config.json").write_text(hf_config_json(config), encoding="utf-8")
    tokenizer_config = {
        "do_lower_case": lowercase,
        "tokenizer_class": "BertTokenizer",
        "model_max_length": config.max_position_embeddings,
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
    }
    (out_dir / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n", encoding="utf-8")
    result = subprocess.run(
        [
            "node",
            str(WRITE_TOKENIZER_JSON),
            str(out_dir / "vocab.txt"),
            str(lowercase).lower(),
            str(out_dir / "tokenizer.json"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    if result.returncode != 0:
        raise RuntimeError(f"writing tokenizer.json failed:\n{result.stderr}")
    link = out_dir / "onnx" / ("model_quantized.onnx" if quantized else "model.onnx")
    link.parent.mkdir(exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    os.symlink(os.path.join("..", "model.onnx"), link)
    return ["config.json", "tokenizer.json", "tokenizer_config.json", str(link.relative_to(out_dir))]
