"""`scripts/export-model`: HF BERT checkpoint -> model directory for the runtime
(model.onnx, INT8 mask-only by default; vocab.txt; model.json)."""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx

from .checkpoint import CheckpointError, load_checkpoint, read_lowercase
from .head import DTYPES as HEAD_DTYPES
from .head import write_head
from .manifest import build_manifest, write_manifest
from .onnx_graph import GRAPH_KINDS, WORD_EMBEDDINGS, export_fp32, graph_inputs
from .prune import corpus_files, count_tokens, kept_token_ids, prune_model
from .quantize import (
    DEFAULT_PATTERN,
    PATTERNS,
    calibration_hessians,
    quantize_dynamic_int8,
    store_weights_fp16,
    store_weights_int8,
)
from .transformers_js import write_transformers_js_files
from .vocab import write_vocab

# Training lines run through the model to calibrate GPTQ (--int8-calibrate): on the default model,
# the agreement measured with it is in docs/int8-weights.md.
CALIBRATION_LINES = 2000


# The shortest max_length the runtime loads (web/src/model/manifest.ts: MIN_MAX_LENGTH).
MIN_MAX_LENGTH = 8


def portable_path(path: str | Path) -> str:
    """A path for a manifest that ships: relative to the repository when inside it, else the folder
    name only (no machine paths in published files)."""
    resolved = Path(path).resolve()
    root = Path(__file__).resolve().parents[2]
    try:
        return str(resolved.relative_to(root))
    except ValueError:
        return resolved.name


def export_model(
    checkpoint_dir: Path,
    out_dir: Path,
    *,
    full_logits: bool = False,
    graph: str = "mask-only",
    fp32: bool = False,
    prune_corpus: Path | None = None,
    min_count: int = 1,
    max_length: int | None = None,
    token_type_ids: bool = False,
    pattern: str = DEFAULT_PATTERN,
    reduce_range: bool = False,
    fp16_weights: bool = False,
    int8_weights: bool = False,
    int8_block: int | None = None,
    int8_calibrate: Path | None = None,
    int8_scales: str = "f32",
    lean: bool = False,
    head_dtype: str | None = None,
    window: tuple[int, ...] | None = None,
    name: str | None = None,
    log=print,
) -> dict:
    """Exports a checkpoint directory into `out_dir` and returns the manifest written.

    `graph`: "mask-only" (logits at the masks), "core" (hidden states at the masks; the C++ core
    holds the embedding table in head.bin) or "full" (logits everywhere; `full_logits=True` too).
    Encoder weights: dynamic INT8 compute by default (`pattern`, `reduce_range`); `fp32`; or stored
    small and restored to float32 at session start, computing as fp32: `fp16_weights` or
    `int8_weights` (int8 per output channel, `int8_block`: per that many entries of a channel;
    `int8_calibrate`: a scripts/build-corpus directory whose training lines calibrate GPTQ rounding;
    `int8_scales`: "f32" or "f16", the block scales' type; quantize.store_weights_int8). At most one
    of the three.
    `head_dtype` (core only): the table type of head.bin, "int8", "f16" or "f32"; default "f32" with
    `fp32`, else "int8".

    Raises CheckpointError/ValueError with the reason for a bad checkpoint, corpus or option."""
    kind = "full" if full_logits else graph
    if kind not in GRAPH_KINDS:
        raise ValueError(f"--graph must be one of {', '.join(GRAPH_KINDS)}, got {graph!r}")
    full_logits = kind == "full"
    if head_dtype is not None and kind != "core":
        raise ValueError(f"--head-dtype {head_dtype} needs --graph core (only the core graph has head.bin)")
    if fp32 + fp16_weights + int8_weights > 1:
        raise ValueError("--fp32, --fp16-weights and --int8-weights exclude each other")
    if (int8_block is not None or int8_calibrate is not None or int8_scales != "f32") and not int8_weights:
        raise ValueError("--int8-block, --int8-calibrate and --int8-scales need --int8-weights")
    if int8_scales == "f16" and int8_block is None:
        raise ValueError("--int8-scales f16 needs --int8-block (float16 scales are for per-block scales)")
    if head_dtype is not None and head_dtype not in HEAD_DTYPES:
        raise ValueError(f"--head-dtype must be one of {', '.join(HEAD_DTYPES)}, got {head_dtype!r}")
    model, vocab = load_checkpoint(checkpoint_dir)
    lowercase = read_lowercase(checkpoint_dir)
    limit = model.config.max_position_embeddings
    if max_length is None:
        max_length = limit
    # The runtime's floor (web/src/model/manifest.ts: MIN_MAX_LENGTH): [CLS], [SEP] and 6 tokens.
    if not MIN_MAX_LENGTH <= max_length <= limit:
        raise ValueError(
            f"--max-length {max_length} must be in {MIN_MAX_LENGTH}..{limit} "
            "(the runtime reads no model shorter; max_position_embeddings)"
        )
    if window is not None and not (8 <= window[1] <= max_length and window[0] >= window[1]):
        raise ValueError(
            f"--window {window[0]}:{window[1]}: need 8 <= SIZE <= max_length ({max_length}) and THRESHOLD >= SIZE"
        )
    if window is not None and len(window) > 2 and not window[0] <= window[2] <= max_length:
        raise ValueError(f"--window ...:{window[2]}: need THRESHOLD <= WHOLE <= max_length ({max_length})")
    source = {
        "checkpoint": portable_path(checkpoint_dir),
        "config_sha256": hashlib.sha256((Path(checkpoint_dir) / "config.json").read_bytes()).hexdigest(),
    }
    pruning = None
    if prune_corpus is not None:
        files = corpus_files(prune_corpus)
        with tempfile.TemporaryDirectory() as work:
            counts = count_tokens(vocab, lowercase, files, Path(work))
        keep = kept_token_ids(vocab, counts, min_count)
        pruning = {
            "source_vocab_size": len(vocab),
            "kept": len(keep),
            "min_count": min_count,
            "corpus": portable_path(prune_corpus),
            "corpus_files": [f.name for f in files],
        }
        log(f"export-model: vocab pruned {len(vocab)} -> {len(keep)} tokens (seen ≥ {min_count}× in {prune_corpus})")
        model, vocab = prune_model(model, vocab, keep)
    proto = export_fp32(model, kind, token_type_ids=token_type_ids, lean=lean)
    embedding = None if kind == "core" else WORD_EMBEDDINGS
    if fp32:
        quantization = {"scheme": "none"}
    elif fp16_weights:
        quantization = store_weights_fp16(proto)
    elif int8_weights:
        hessians = None
        if int8_calibrate is not None:
            hessians = calibration_hessians(model, proto, int8_calibrate, CALIBRATION_LINES)
            log(f"export-model: GPTQ calibrated on {CALIBRATION_LINES} training lines of {int8_calibrate}")
        quantization = store_weights_int8(proto, block=int8_block, hessians=hessians, scales=int8_scales)
        if hessians is not None:
            quantization["calibration"] = {"corpus": portable_path(int8_calibrate), "lines": CALIBRATION_LINES}
    else:
        quantization = quantize_dynamic_int8(proto, embedding, pattern, reduce_range)
    if kind == "core":
        head_dtype = head_dtype or ("f32" if fp32 else "int8")
        if "embeddings" in quantization:  # the INT8 summary: the table is head.bin's, in its own type
            quantization["embeddings"] = (
                f"{'int8 per row' if head_dtype == 'int8' else head_dtype} in head.bin "
                "(the C++ core gathers inputs and projects outputs)"
            )
    if pruning:
        source["vocab_pruning"] = pruning
    onnx.checker.check_model(proto)
    out_dir.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, out_dir / "model.onnx")
    write_vocab(vocab, out_dir / "vocab.txt")
    if kind == "core":
        write_head(model, out_dir / "head.bin", head_dtype)
    else:
        (out_dir / "head.bin").unlink(missing_ok=True)
    manifest = build_manifest(
        out_dir,
        name=name or Path(checkpoint_dir).resolve().name,
        config=model.config,
        vocab=vocab,
        lowercase=lowercase,
        max_length=max_length,
        inputs=graph_inputs(kind, token_type_ids),
        kind=kind,
        quantization=quantization,
        source=source,
        head_dtype=head_dtype,
    )
    if window is not None:
        manifest["window"] = {"threshold": window[0], "size": window[1]}
        if len(window) > 2:
            manifest["window"]["whole_up_to"] = window[2]
    if full_logits:
        manifest["transformers_js"] = write_transformers_js_files(out_dir, model.config, lowercase, quantized=not fp32)
    write_manifest(manifest, out_dir)
    size = manifest["files"]["model.onnx"]["bytes"]
    log(
        f"export-model: {out_dir / 'model.onnx'} {size / 1e6:.1f} MB "
        f"({encoder_form(quantization, pattern)}, "
        f"{manifest['logits']} graph{', ' + head_dtype + ' head.bin' if head_dtype else ''}, "
        f"inputs {', '.join(manifest['inputs'])})"
    )
    return manifest


def encoder_form(quantization: dict, pattern: str) -> str:
    """How the encoder's weights were written (the manifest's "quantization"), for the export's
    one-line summary."""
    scheme = quantization["scheme"]
    if scheme == "none":
        return "fp32"
    if scheme == "fp16-weights":
        return "fp16 weights"
    if scheme == "int8-weights":
        block, kept = quantization["block"], quantization["fp16_matrices"]
        return (
            f"int8 weights ({quantization['rounding']} rounding), a scale per "
            f"{'channel' if block is None else f'{block} entries'}"
            f"{' (float16 scales)' if quantization.get('scales') == 'float16' else ''}"
            f"{f', {len(kept)} fp16' if kept else ''}, computed in fp32"
        )
    return f"dynamic int8 {pattern}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="export-model", description=__doc__)
    parser.add_argument("checkpoint_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument(
        "--full-logits",
        action="store_true",
        help="standard BERT-MLM graph: logits [batch, seq, vocab] (transformers.js-compatible); same as --graph full",
    )
    parser.add_argument(
        "--graph",
        choices=GRAPH_KINDS,
        default="mask-only",
        help="core: hidden states at the masks, the C++ core holds the tied embedding table "
        "(head.bin) and computes input embeddings and logits; mask-only: logits at the masks "
        "in ONNX Runtime; full: logits everywhere",
    )
    parser.add_argument("--fp32", action="store_true", help="skip INT8 quantization")
    parser.add_argument(
        "--fp16-weights",
        action="store_true",
        help="instead of INT8: float16-stored weights cast to float32 when the session starts "
        "(ONNX Runtime then packs them once; compare with scripts/bench-model)",
    )
    parser.add_argument(
        "--lean",
        action="store_true",
        help="the lean graph (model/tiankong_model/lean_graph.py: ONNX Runtime's fused contrib operators, "
        "no shape arithmetic) instead of the torch export; same inputs and outputs",
    )
    parser.add_argument(
        "--int8-weights",
        action="store_true",
        help="instead of dynamic INT8: int8-stored weights with a scale per output channel, restored to float32 "
        "when the session starts (fp32 kernels, no activation quantization; about 1 byte a weight)",
    )
    parser.add_argument(
        "--int8-block",
        type=int,
        metavar="N",
        help="with --int8-weights: a scale per N consecutive entries of each output channel instead of one per "
        "channel (finer; 4/N more bytes a weight)",
    )
    parser.add_argument(
        "--int8-calibrate",
        type=Path,
        metavar="CORPUS_DIR",
        help="with --int8-weights: choose the int8 values by GPTQ, from the layers' inputs on "
        f"{CALIBRATION_LINES} training lines of a scripts/build-corpus directory (e.g. .cache/corpus; its "
        "vocabulary must be the model's) instead of rounding each weight to nearest",
    )
    parser.add_argument(
        "--int8-scales",
        choices=("f32", "f16"),
        default="f32",
        help="with --int8-block: the scales' type; f16 halves their bytes (block 4 with f16 scales is the size of "
        "block 8 with f32 ones)",
    )
    parser.add_argument(
        "--head-dtype",
        choices=list(HEAD_DTYPES),
        help="with --graph core: the table type of head.bin (the tied embedding table the core computes "
        "input embeddings and logits from): int8 (a scale per row; default), f16 (half the f32 bytes, "
        "logits far closer to fp32 than int8) or f32 (default with --fp32)",
    )
    parser.add_argument(
        "--prune-vocab",
        type=Path,
        metavar="CORPUS_DIR",
        help="keep only tokens occurring in CORPUS_DIR/*.txt (plus specials)",
    )
    parser.add_argument("--min-count", type=int, default=1, help="with --prune-vocab: occurrences to keep a token")
    parser.add_argument(
        "--max-length", type=int, help="longest input the runtime may send (default: max_position_embeddings)"
    )
    parser.add_argument(
        "--token-type-ids",
        action="store_true",
        help="mask-only graph takes token_type_ids too (default: single segment, type 0 built in)",
    )
    parser.add_argument("--pattern", choices=PATTERNS, default=DEFAULT_PATTERN, help="INT8 op pattern")
    parser.add_argument(
        "--reduce-range",
        action="store_true",
        help="7-bit weights: exact on x86 onnxruntime-node (saturates with 8), a little less precise in wasm",
    )
    parser.add_argument("--name", help="model name in model.json (default: checkpoint directory name)")
    parser.add_argument(
        "--window",
        metavar="THRESHOLD:SIZE[:WHOLE]",
        help="the runtime reads inputs longer than THRESHOLD tokens through windows of SIZE tokens "
        "around the masks (faster on long texts; measure agreement with scripts/measure-window); "
        "WHOLE: inputs of up to this many tokens are read whole when the windows would read more "
        "tokens than the input has (spread-out masks) — at most the length the model was trained on",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="also build the corpus memory for this model (scripts/build-memory; needs the corpus "
        "from scripts/build-corpus) and tune its fusion weights on the dev split (scripts/tune-fusion)",
    )
    args = parser.parse_args(argv)
    if args.memory and (args.full_logits or args.graph == "full"):
        print(
            "export-model: --memory needs the mask-only export (the runtime fuses the memory in its decoder)",
            file=sys.stderr,
        )
        return 2
    try:
        export_model(
            args.checkpoint_dir,
            args.out_dir,
            full_logits=args.full_logits,
            graph=args.graph,
            fp32=args.fp32,
            prune_corpus=args.prune_vocab,
            min_count=args.min_count,
            max_length=args.max_length,
            token_type_ids=args.token_type_ids,
            pattern=args.pattern,
            reduce_range=args.reduce_range,
            fp16_weights=args.fp16_weights,
            int8_weights=args.int8_weights,
            int8_block=args.int8_block,
            int8_calibrate=args.int8_calibrate,
            int8_scales=args.int8_scales,
            lean=args.lean,
            head_dtype=args.head_dtype,
            window=parse_window(args.window),
            name=args.name,
        )
    except (CheckpointError, ValueError, RuntimeError) as err:
        print(f"export-model: {err}", file=sys.stderr)
        return 1
    if args.memory:
        return add_memory(args.out_dir)
    return 0


def parse_window(text: str | None) -> tuple[int, ...] | None:
    """ "96:64" -> (96, 64); "96:64:512" -> (96, 64, 512); ValueError for anything else."""
    if text is None:
        return None
    parts = text.split(":")
    if len(parts) not in (2, 3) or not all(part.isdigit() for part in parts):
        raise ValueError(f"--window {text!r}: expected THRESHOLD:SIZE[:WHOLE] in tokens, e.g. 128:128 or 96:64:512")
    return tuple(int(part) for part in parts)


def add_memory(out_dir: Path) -> int:
    """Builds memory.bin for an exported model directory and tunes its fusion weights."""
    scripts = Path(__file__).resolve().parents[2] / "scripts"
    for step in (["build-memory", str(out_dir)], ["tune-fusion", str(out_dir)]):
        result = subprocess.run([str(scripts / step[0]), *step[1:]])
        if result.returncode != 0:
            print(
                f"export-model: {step[0]} failed (status {result.returncode}); the model is exported without "
                f"a tuned memory",
                file=sys.stderr,
            )
            return result.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
