"""`model.json`, the manifest the runtime reads next to model.onnx and vocab.txt
(format "tiankong-model/1")."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .bert import BertConfig
from .vocab import special_token_ids

FORMAT = "tiankong-model/1"


def file_entry(path: Path) -> dict:
    """{"sha256": hex digest, "bytes": size} of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"sha256": digest.hexdigest(), "bytes": path.stat().st_size}


def build_manifest(
    out_dir: Path,
    *,
    name: str,
    config: BertConfig,
    vocab: list[str],
    lowercase: bool,
    max_length: int,
    inputs: list[str],
    kind: str,
    quantization: dict,
    source: dict,
    head_dtype: str | None = None,
) -> dict:
    """The manifest of an exported model directory (model.onnx, vocab.txt and, for the "core"
    graph kind, head.bin already written). `kind`: "core", "mask-only" or "full" (onnx_graph.py)."""
    files = ["model.onnx", "vocab.txt", *(["head.bin"] if kind == "core" else [])]
    return {
        "format": FORMAT,
        "name": name,
        "architecture": {
            "type": "bert",
            "num_hidden_layers": config.num_hidden_layers,
            "hidden_size": config.hidden_size,
            "num_attention_heads": config.num_attention_heads,
            "intermediate_size": config.intermediate_size,
            "vocab_size": config.vocab_size,
            "max_position_embeddings": config.max_position_embeddings,
            **(
                {}
                if config.is_hf_bert
                else {
                    "layer_norm_position": config.layer_norm_position,
                    "projection_bias": config.projection_bias,
                    "ffn_type": config.ffn_type,
                }
            ),
        },
        "max_length": max_length,
        "tokenizer": {
            "vocab": "vocab.txt",
            "lowercase": lowercase,
            "strip_accents": lowercase,
            "clean_text": True,
            "handle_chinese_chars": True,
        },
        "special_tokens": special_token_ids(vocab),
        "inputs": inputs,
        "outputs": ["hidden" if kind == "core" else "logits"],
        "logits": kind,
        **({"head": {"file": "head.bin", "dtype": head_dtype}} if kind == "core" else {}),
        "quantization": quantization,
        "files": {f: file_entry(out_dir / f) for f in files},
        "source": source,
    }


def write_manifest(manifest: dict, out_dir: Path) -> None:
    (out_dir / "model.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def read_manifest(model_dir: str | Path) -> dict:
    """Reads and checks model.json; raises ValueError naming the problem."""
    path = Path(model_dir) / "model.json"
    if not path.is_file():
        raise ValueError(f"{model_dir}: no model.json (not an exported tiankong model directory)")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{path}: format is {manifest.get('format')!r}, expected {FORMAT!r}")
    return manifest
