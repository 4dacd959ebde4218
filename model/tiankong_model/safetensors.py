"""Reader and writer for the safetensors format, without the `safetensors` package.

Layout: an 8-byte little-endian header length N, N bytes of JSON
(`{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`,
offsets relative to the end of the header), then the raw little-endian tensor bytes.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import torch

# safetensors dtype name -> numpy dtype of the stored bytes. BF16 has no numpy dtype:
# it is read as uint16 and widened to float32 (bf16 is the top half of an fp32).
_NUMPY_DTYPES = {
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"),
}
_TORCH_TO_NAME = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64"}
_HEADER_ALIGNMENT = 8


def load_safetensors(path: str | Path) -> dict[str, torch.Tensor]:
    """Reads every tensor of a .safetensors file (F32, F16, BF16, I64).

    Raises ValueError naming the file for a truncated file, a malformed header, an
    unsupported dtype or offsets that do not match the shape."""
    path = Path(path)
    data = path.read_bytes()
    if len(data) < 8:
        raise ValueError(f"{path}: too short to be a safetensors file ({len(data)} bytes)")
    (header_len,) = struct.unpack("<Q", data[:8])
    if 8 + header_len > len(data):
        raise ValueError(f"{path}: header length {header_len} runs past the end of the file ({len(data)} bytes)")
    try:
        header = json.loads(data[8 : 8 + header_len].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: header is not valid JSON: {err}") from None
    body = memoryview(data)[8 + header_len :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype_name, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        if dtype_name not in _NUMPY_DTYPES:
            raise ValueError(f"{path}: tensor {name!r} has dtype {dtype_name}; supported: {sorted(_NUMPY_DTYPES)}")
        np_dtype = _NUMPY_DTYPES[dtype_name]
        expected = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
        if end - begin != expected or end > len(body):
            raise ValueError(
                f"{path}: tensor {name!r} spans bytes [{begin}, {end}) but shape {shape} "
                f"{dtype_name} needs {expected} bytes (body has {len(body)})"
            )
        array = np.frombuffer(body[begin:end], dtype=np_dtype).reshape(shape)
        if dtype_name == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = torch.from_numpy(array.copy())
    return tensors


def save_safetensors(
    tensors: dict[str, torch.Tensor], path: str | Path, metadata: dict[str, str] | None = None
) -> None:
    """Writes tensors as a .safetensors file, as the `safetensors` package lays it out
    (tensors in name order, header padded with spaces to 8 bytes).

    Raises ValueError for a dtype outside F32/F16/BF16/I64 or tensors sharing memory
    (the format stores each tensor once; drop tied duplicates first)."""
    seen = {}
    for name, tensor in tensors.items():
        if tensor.dtype not in _TORCH_TO_NAME:
            raise ValueError(
                f"tensor {name!r} has dtype {tensor.dtype}; safetensors writer supports "
                f"{sorted(_TORCH_TO_NAME.values())}"
            )
        if tensor.numel() and tensor.data_ptr() in seen:
            raise ValueError(f"tensors {seen[tensor.data_ptr()]!r} and {name!r} share memory; save one of them")
        seen[tensor.data_ptr()] = name
    header: dict = {"__metadata__": metadata} if metadata else {}
    chunks, offset = [], 0
    for name in sorted(tensors):
        tensor = tensors[name].detach().contiguous().cpu()
        raw = (tensor.view(torch.int16) if tensor.dtype == torch.bfloat16 else tensor).numpy().tobytes()
        header[name] = {
            "dtype": _TORCH_TO_NAME[tensor.dtype],
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        chunks.append(raw)
        offset += len(raw)
    header_bytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    header_bytes += b" " * (-len(header_bytes) % _HEADER_ALIGNMENT)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(header_bytes)))
        out.write(header_bytes)
        for chunk in chunks:
            out.write(chunk)
