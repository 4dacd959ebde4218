"""head.bin: the tied word-embedding table and the MLM bias, for the C++ core's output layer
(wasm/src/output_layer.cc documents the format, which this writes and reads).

The core computes both ends of the network from this one table: the input embeddings of the
ids (the "core" graph takes inputs_embeds) and the logits of the hidden states at the masks.
int8: one symmetric scale per vocabulary row (row v ≈ int8 row × scale[v]), rows zero-padded to a
multiple of 16 entries; f16: IEEE half floats (round to nearest even), rows zero-padded to an even
number of entries so the bias after the table stays 4-byte aligned (half the f32 bytes, far closer
to fp32 than int8; the core converts it to float32 once at load); f32: the table as it is (the
fp32 export INT8 is measured against).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from .bert import BertForMaskedLM

MAGIC = b"TKOUTPUT"
VERSION = 1
DTYPES = {"int8": 1, "f32": 2, "f16": 3}
ROW_ALIGN = 16  # int8 rows
F16_ROW_ALIGN = 2  # f16 rows: a whole number of 4-byte words


def quantize_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per row: (q [V, H] int8 in -127..127, scale [V] float32); a zero row gets scale 0."""
    scale = np.abs(table).max(axis=1).astype(np.float32) / 127.0
    safe = np.where(scale > 0, scale, 1.0).astype(np.float32)
    q = np.clip(np.rint(table / safe[:, None]), -127, 127).astype(np.int8)
    return q, scale


def head_bytes(model: BertForMaskedLM, dtype: str = "int8") -> bytes:
    """The head.bin of `model` (its word embeddings and cls.predictions.bias)."""
    if dtype not in DTYPES:
        raise ValueError(f"head dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    table = model.bert.embeddings.word_embeddings.weight.detach().float().numpy()
    bias = model.cls.predictions.bias.detach().float().numpy().astype("<f4")
    vocab, hidden = table.shape
    if dtype == "int8":
        stride = (hidden + ROW_ALIGN - 1) // ROW_ALIGN * ROW_ALIGN
        q, scale = quantize_rows(table)
        padded = np.zeros((vocab, stride), dtype=np.int8)
        padded[:, :hidden] = q
        payload = padded.tobytes() + scale.astype("<f4").tobytes() + bias.tobytes()
    elif dtype == "f16":
        stride = (hidden + F16_ROW_ALIGN - 1) // F16_ROW_ALIGN * F16_ROW_ALIGN
        with np.errstate(over="ignore"):
            half = table.astype("<f2")
        if not np.isfinite(half).all():
            raise ValueError("the embedding table does not fit float16 (a weight beyond ±65504)")
        padded = np.zeros((vocab, stride), dtype="<f2")
        padded[:, :hidden] = half
        payload = padded.tobytes() + bias.tobytes()
    else:
        stride = hidden
        payload = table.astype("<f4").tobytes() + bias.tobytes()
    header = MAGIC + struct.pack("<6I", VERSION, DTYPES[dtype], vocab, hidden, stride, zlib.crc32(payload))
    return header + payload


def write_head(model: BertForMaskedLM, path: Path, dtype: str = "int8") -> None:
    Path(path).write_bytes(head_bytes(model, dtype))


def read_head(path: Path) -> dict:
    """The tables of a head.bin (for tests and tools): {"dtype", "table" [V, H] float32 (dequantised or
    widened from float16), "bias"}."""
    data = Path(path).read_bytes()
    if data[:8] != MAGIC:
        raise ValueError(f"{path}: not a head.bin (no TKOUTPUT magic)")
    version, dtype, vocab, hidden, stride, crc = struct.unpack("<6I", data[8:32])
    payload = data[32:]
    if version != VERSION or zlib.crc32(payload) != crc:
        raise ValueError(f"{path}: version {version} or checksum mismatch")
    if dtype == DTYPES["int8"]:
        q = np.frombuffer(payload, np.int8, vocab * stride).reshape(vocab, stride)[:, :hidden]
        scale = np.frombuffer(payload, "<f4", vocab, vocab * stride)
        bias = np.frombuffer(payload, "<f4", vocab, vocab * stride + 4 * vocab)
        return {"dtype": "int8", "table": q.astype(np.float32) * scale[:, None], "bias": bias.copy()}
    if dtype == DTYPES["f16"]:
        half = np.frombuffer(payload, "<f2", vocab * stride).reshape(vocab, stride)[:, :hidden]
        bias = np.frombuffer(payload, "<f4", vocab, 2 * vocab * stride)
        return {"dtype": "f16", "table": half.astype(np.float32), "bias": bias.copy()}
    if dtype != DTYPES["f32"]:
        raise ValueError(f"{path}: unknown table type {dtype}")
    table = np.frombuffer(payload, "<f4", vocab * hidden).reshape(vocab, hidden)
    return {
        "dtype": "f32",
        "table": table.copy(),
        "bias": np.frombuffer(payload, "<f4", vocab, 4 * vocab * hidden).copy(),
    }
