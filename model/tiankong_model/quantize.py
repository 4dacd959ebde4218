"""Weight compression for exported BERT graphs: our INT8 dynamic quantizer (the onnxruntime Python
quantizer is not installable here) and two forms whose weights are only *stored* small and
restored to float32 when the session starts (store_weights_fp16, store_weights_int8).

Dynamic INT8:

- Every MatMul/Gemm with a constant 2-D weight gets int8 weights, symmetric per output
  channel; activations are quantized at run time to uint8 per tensor
  (DynamicQuantizeLinear), one quantization shared by all MatMuls reading the same tensor
  (Q/K/V read one LayerNorm output).
- The word embedding table becomes int8 with one scale per row, read with
  Gather(int8) + Gather(scale) + Cast + Mul; the tied decoder reads the same int8 table
  through the exporter's Transpose, so the table is stored once and never dequantized whole.
- Activation × activation MatMuls (attention scores and context) stay fp32.

Three op patterns compute the same thing; which one runs fastest is measured, not assumed
(scripts/bench-model --patterns):
  "integer":          DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul (standard ONNX ops)
  "integer-to-float": DynamicQuantizeLinear -> com.microsoft.MatMulIntegerToFloat (bias fused)
  "dynamic-matmul":   com.microsoft.DynamicQuantizeMatMul (quantizes inside, bias fused)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PATTERNS = ("integer", "integer-to-float", "dynamic-matmul")
RESTORES = ("cast-mul", "dequantize-linear")
DEFAULT_RESTORE = "cast-mul"
DEFAULT_PATTERN = "integer-to-float"
MS_DOMAIN = "com.microsoft"
INT8_MAX = 127


def quantize_columns(weight: np.ndarray, q_max: int = INT8_MAX) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 quantization of a [K, N] matrix with one scale per column:
    weight ≈ q * scale[None, :], q in [-q_max, q_max] (−128 unused so the range is
    symmetric). An all-zero column gets scale 1."""
    scale = np.abs(weight).max(axis=0).astype(np.float32) / q_max
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(weight / scale), -q_max, q_max).astype(np.int8)
    return q, scale


class _Rewriter:
    """Holds the graph being rewritten: initializer lookup, consumers, fresh names."""

    def __init__(self, proto: onnx.ModelProto):
        self.graph = proto.graph
        self.initializers = {init.name: init for init in self.graph.initializer}
        self.consumers: dict[str, list[onnx.NodeProto]] = {}
        for node in self.graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self.graph_outputs = {out.name for out in self.graph.output}
        self.new_initializers: list[onnx.TensorProto] = []

    def constant(self, name: str) -> np.ndarray | None:
        init = self.initializers.get(name)
        return None if init is None else numpy_helper.to_array(init)

    def add_initializer(self, array: np.ndarray, name: str) -> str:
        self.new_initializers.append(numpy_helper.from_array(array, name))
        return name

    def sole_bias_add(self, output: str) -> tuple[onnx.NodeProto, str] | None:
        """The Add that is the only consumer of `output` and adds a constant 1-D bias."""
        users = self.consumers.get(output, [])
        if len(users) != 1 or users[0].op_type != "Add" or output in self.graph_outputs:
            return None
        add = users[0]
        other = add.input[1] if add.input[0] == output else add.input[0]
        bias = self.constant(other)
        return (add, other) if bias is not None and bias.ndim == 1 else None

    def finish(self) -> None:
        """Installs new initializers and drops the ones no node reads any more."""
        self.graph.initializer.extend(self.new_initializers)
        used = {name for node in self.graph.node for name in node.input}
        for init in list(self.graph.initializer):
            if init.name not in used:
                self.graph.initializer.remove(init)


def quantize_dynamic_int8(
    proto: onnx.ModelProto, embedding: str | None, pattern: str = DEFAULT_PATTERN, reduce_range: bool = False
) -> dict:
    """Quantizes `proto` in place (see module docstring). `embedding` is the word-embedding
    initializer; a Transpose of it feeding a MatMul is the tied decoder. None: the graph has no
    embedding table (the "core" export: head.bin holds it).

    reduce_range: 7-bit weights (±63). x86 onnxruntime-node computes uint8×int8 with
    16-bit saturating multiply-adds, which full-range weights overflow (measured: 10× the
    wasm error); onnxruntime-web's wasm kernels do not saturate, so the default is 8 bits.

    Returns a summary for the manifest. Raises ValueError for an unknown pattern, a missing
    embedding or a Gemm with transA/alpha/beta this rewrite does not handle."""
    if pattern not in PATTERNS:
        raise ValueError(f"unknown quantization pattern {pattern!r}; choose one of {PATTERNS}")
    rw = _Rewriter(proto)
    q_max = 63 if reduce_range else INT8_MAX
    table = rw.constant(embedding) if embedding is not None else None
    if embedding is not None and table is None:
        raise ValueError(f"graph has no initializer {embedding!r} to quantize as the word embedding")
    table_q = row_scale = row_scale_2d = None
    if table is not None:
        table_q_t, row_scale = quantize_columns(table.T, q_max)
        table_q = rw.add_initializer(np.ascontiguousarray(table_q_t.T), embedding + ".int8")
        row_scale_2d = rw.add_initializer(row_scale.reshape(-1, 1), embedding + ".row_scale")
    # Weights already int8 (the decoder's transposed table): name -> per-column scale.
    int8_weights: dict[str, str] = {}
    shared_dql: dict[str, tuple[str, str, str]] = {}
    nodes: list[onnx.NodeProto] = []
    skipped: set[int] = set()
    matmuls = 0

    def dynamic_quantize(activation: str) -> tuple[str, str, str]:
        if activation not in shared_dql:
            base = activation.strip("/").replace("/", ".")
            outs = (f"{base}.u8", f"{base}.scale", f"{base}.zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [activation], list(outs), name=f"{base}.dql"))
            shared_dql[activation] = outs
        return shared_dql[activation]

    def emit_matmul(node: onnx.NodeProto, activation: str, weight_q: str, scale: str, output: str) -> None:
        nonlocal matmuls
        matmuls += 1
        fused = rw.sole_bias_add(output) if pattern != "integer" else None
        bias = ""
        if fused:
            skipped.add(id(fused[0]))
            bias, output = fused[1], fused[0].output[0]
        name = node.name or output
        if pattern == "dynamic-matmul":
            nodes.append(
                helper.make_node(
                    "DynamicQuantizeMatMul",
                    [activation, weight_q, scale, "", bias],
                    [output],
                    name=name,
                    domain=MS_DOMAIN,
                )
            )
            return
        a_q, a_scale, a_zero = dynamic_quantize(activation)
        if pattern == "integer-to-float":
            nodes.append(
                helper.make_node(
                    "MatMulIntegerToFloat",
                    [a_q, weight_q, a_scale, scale, a_zero, "", bias],
                    [output],
                    name=name,
                    domain=MS_DOMAIN,
                )
            )
            return
        nodes.extend(
            [
                helper.make_node("MatMulInteger", [a_q, weight_q, a_zero], [f"{name}.i32"], name=f"{name}.int"),
                helper.make_node("Cast", [f"{name}.i32"], [f"{name}.f32"], name=f"{name}.cast", to=TensorProto.FLOAT),
                helper.make_node("Mul", [a_scale, scale], [f"{name}.scale"], name=f"{name}.scale"),
                helper.make_node("Mul", [f"{name}.f32", f"{name}.scale"], [output], name=f"{name}.dequant"),
            ]
        )

    for node in list(rw.graph.node):
        if id(node) in skipped:
            continue
        if table is not None and node.op_type == "Gather" and node.input[0] == embedding:
            out = node.output[0]
            nodes.extend(
                [
                    helper.make_node("Gather", [table_q, node.input[1]], [f"{out}.int8"], name=f"{node.name}.int8"),
                    helper.make_node(
                        "Cast", [f"{out}.int8"], [f"{out}.f32"], name=f"{node.name}.cast", to=TensorProto.FLOAT
                    ),
                    helper.make_node(
                        "Gather", [row_scale_2d, node.input[1]], [f"{out}.scale"], name=f"{node.name}.scale"
                    ),
                    helper.make_node("Mul", [f"{out}.f32", f"{out}.scale"], [out], name=f"{node.name}.dequant"),
                ]
            )
        elif table is not None and node.op_type == "Transpose" and node.input[0] == embedding:
            nodes.append(helper.make_node("Transpose", [table_q], [node.output[0]], name=node.name, perm=[1, 0]))
            int8_weights[node.output[0]] = rw.add_initializer(row_scale, embedding + ".col_scale")
        elif node.op_type == "MatMul" and node.input[1] in int8_weights:
            emit_matmul(node, node.input[0], node.input[1], int8_weights[node.input[1]], node.output[0])
        elif node.op_type in ("MatMul", "Gemm") and _constant_2d(rw, node.input[1]) is not None:
            weight = _constant_2d(rw, node.input[1])
            if node.op_type == "Gemm":
                weight = _gemm_weight(node, weight)
            weight_q, scale = quantize_columns(weight, q_max)
            base = node.input[1]
            q_name = rw.add_initializer(weight_q, base + ".int8")
            s_name = rw.add_initializer(scale, base + ".scale")
            if node.op_type == "Gemm" and len(node.input) > 2 and node.input[2]:
                product = f"{node.name or node.output[0]}.product"
                emit_matmul(node, node.input[0], q_name, s_name, product)
                nodes.append(
                    helper.make_node("Add", [product, node.input[2]], [node.output[0]], name=f"{node.name}.bias")
                )
            else:
                emit_matmul(node, node.input[0], q_name, s_name, node.output[0])
        else:
            nodes.append(node)
    del rw.graph.node[:]
    rw.graph.node.extend(nodes)
    rw.finish()
    if pattern != "integer" and not any(op.domain == MS_DOMAIN for op in proto.opset_import):
        proto.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
    return {
        "scheme": "int8-dynamic-per-channel",
        "weights": "int8 symmetric per output channel",
        "weight_range": q_max,
        "activations": "uint8 dynamic per tensor (DynamicQuantizeLinear)",
        "embeddings": "int8 per row, decoder tied to the same table"
        if table is not None
        else "int8 per row in head.bin (the C++ core gathers inputs and projects outputs)",
        "op_pattern": pattern,
        "quantized_matmuls": matmuls,
    }


def _constant_2d(rw: _Rewriter, name: str) -> np.ndarray | None:
    value = rw.constant(name)
    return value if value is not None and value.ndim == 2 and value.dtype == np.float32 else None


def _gemm_weight(node: onnx.NodeProto, weight: np.ndarray) -> np.ndarray:
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
        raise ValueError(f"Gemm {node.name!r} has transA/alpha/beta {attrs}; only plain A·B(+C) is quantized")
    return weight.T if attrs.get("transB", 0) else weight


def _stored_matrices(graph: onnx.GraphProto) -> list[tuple[onnx.TensorProto, np.ndarray, list[onnx.NodeProto]]]:
    """The constant float32 matrices worth storing small: 2-D, at least 4 096 entries, read only by
    MatMul/Gemm (weights), Gather (embedding tables) or Transpose (a tied decoder) nodes."""
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    found = []
    for init in graph.initializer:
        if init.data_type != TensorProto.FLOAT or len(init.dims) != 2 or init.dims[0] * init.dims[1] < 4096:
            continue
        users = consumers.get(init.name, [])
        if users and all(u.op_type in ("MatMul", "Gemm", "Gather", "Transpose") for u in users):
            found.append((init, numpy_helper.to_array(init), users))
    return found


def _rows_are_channels(users: list[onnx.NodeProto]) -> bool:
    """Whether a matrix's output channels are its rows: tables read by Gather (one row per token or
    position), a tied decoder (Transpose: row v is logit v's weights), a Gemm with transB.
    Otherwise it is a MatMul weight [K, N], whose output channels are its columns."""
    for node in users:
        if node.op_type in ("Gather", "Transpose"):
            return True
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "Gemm" and attrs.get("transB", 0):
            return True
    return False


SCALE_DTYPES = {"f32": np.float32, "f16": np.float16}


def stored_scale(scale: np.ndarray, scale_dtype=np.float32) -> np.ndarray:
    """`scale` (float32, > 0) as stored in `scale_dtype`: float16 rounds up to the next float16 at
    or above it (so no weight divided by it exceeds the int8 range) and never to 0."""
    if scale_dtype == np.float32:
        return scale.astype(np.float32)
    half = scale.astype(np.float16)
    low = half.astype(np.float32) < scale
    half[low] = np.nextafter(half[low], np.float16(np.inf))
    return half


def quantize_blocks(weight: np.ndarray, block: int | None, scale_dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 quantization of a [K, N] matrix with one scale per column (block None) or per
    `block` consecutive entries of a column (K divisible by `block`): weight ≈ q * scale, where
    scale is [1, N] per column or [K / block, 1, N] per block against q reshaped [K / block, block, N].
    q is returned [K, N] in -127..127; an all-zero column or block gets scale 1 (its q are 0).
    `scale_dtype` np.float16 (blocks only): scales stored as float16 (stored_scale), q rounded
    against them. Raises ValueError for a block size that does not divide K."""
    if block is None:
        if scale_dtype != np.float32:
            raise ValueError("float16 scales need per-block scales (a block size)")
        q, scale = quantize_columns(weight)
        return q, scale.reshape(1, -1)
    rows, cols = weight.shape
    if block <= 0 or rows % block:
        raise ValueError(f"block size {block} does not divide the reduction axis ({rows})")
    blocks = weight.reshape(rows // block, block, cols)
    scale = np.abs(blocks).max(axis=1, keepdims=True).astype(np.float32) / INT8_MAX
    scale[scale == 0] = 1.0
    scale = stored_scale(scale, scale_dtype)
    q = np.clip(np.rint(blocks / scale.astype(np.float32)), -INT8_MAX, INT8_MAX).astype(np.int8)
    return q.reshape(rows, cols), scale


def store_weights_fp16(proto: onnx.ModelProto) -> dict:
    """Stores every constant float matrix (MatMul/Gemm weights, embedding tables) as float16 with a
    Cast back to float32 in front of its consumers: half the bytes of fp32 on disk and over the
    network; ONNX Runtime folds the Casts when the session starts, so inference runs fp32 kernels
    whose weights are packed once (unlike dynamic INT8, whose wasm kernel re-packs every run).
    Which one is faster per model is measured (scripts/bench-model --patterns), not assumed."""
    graph = proto.graph
    casts = [_store_fp16(graph, init, array) for init, array, _ in _stored_matrices(graph)]
    nodes = casts + list(graph.node)  # Casts first: their outputs keep the old initializer names
    del graph.node[:]
    graph.node.extend(nodes)
    return {
        "scheme": "fp16-weights",
        "weights": "float16 stored, cast to float32 at session start",
        "activations": "float32",
        "converted_matrices": len(casts),
    }


def _store_fp16(graph: onnx.GraphProto, init: onnx.TensorProto, array: np.ndarray) -> onnx.NodeProto:
    """Replaces `init` by its float16 copy and returns the Cast that restores it under its name."""
    half = numpy_helper.from_array(array.astype(np.float16), init.name + ".fp16")
    graph.initializer.remove(init)
    graph.initializer.append(half)
    return helper.make_node("Cast", [half.name], [init.name], name=init.name + ".cast", to=TensorProto.FLOAT)


# Matrices the int8-weights form keeps as float16 (initializer names containing these): the
# position table, which every token adds before the first LayerNorm, and the MLM head's transform,
# the last matrix before the vocabulary projection (heavy-tailed rows: int8 per channel rounds it
# 3x coarser than the layers' matrices). On the default model, int8 in these two alone moved the
# logits by 0.063 rms, all 26 matrices by 0.070, the other 24 by 0.026; they are 6 % of the
# weights (docs/int8-weights.md).
INT8_KEEP_FP16 = ("position_embeddings", "transform.dense")


def store_weights_int8(
    proto: onnx.ModelProto,
    block: int | None = None,
    keep_fp16: tuple[str, ...] = INT8_KEEP_FP16,
    restore: str = DEFAULT_RESTORE,
    hessians: dict[str, np.ndarray] | None = None,
    scales: str = "f32",
    act_order: bool = True,
) -> dict:
    """Stores every constant float matrix (the selection of store_weights_fp16) as int8 with a
    float32 scale per output channel (`block`: per that many consecutive entries of a channel
    along the reduction axis), restored to float32 by constant nodes in front of its consumers;
    matrices whose name contains a `keep_fp16` entry are stored as float16 instead. ONNX Runtime
    folds the restoring nodes when the session starts, so the matrices reach its kernels as float32
    initializers, packed once: inference runs at fp32 speed on exactly the dequantised weights
    (no activation quantization, the error of dynamic INT8), and the file holds ~1 byte a weight.

    `restore`: "cast-mul" (Cast int8 -> float32, Mul by the scale: folded by onnxruntime-node and
    -web with default options; measured) or "dequantize-linear" (per-axis DequantizeLinear, for
    comparison only: ONNX Runtime folds it only with the session option
    session.disable_quant_qdq = "1"; without it its QDQ fusion turns DequantizeLinear -> MatMul into
    MatMulNBits, which dequantizes on every run: measured 1.4-1.6x slower natively). Blocks need "cast-mul"
    (a per-block DequantizeLinear needs opset 21).

    `hessians` (calibration_hessians): for the MatMul weights named there, the int8 values are
    chosen by GPTQ (gptq_columns) instead of rounding each weight to nearest: the same storage and
    restore, an output error about half as large on the default model; `act_order` as
    gptq_columns'. `scales`: "f32" or "f16" (blocks only: half the scale bytes, so block 4 costs
    what block 8 does with f32 scales; cast to float32 when the session starts, folded too).

    Mutates `proto` in place and returns the manifest's "quantization" summary. Raises ValueError
    for an unknown `restore` or `scales`, blocks with "dequantize-linear", f16 scales without
    blocks, or a block not dividing a matrix."""
    if restore not in RESTORES:
        raise ValueError(f"unknown restore {restore!r}; choose one of {RESTORES}")
    if scales not in SCALE_DTYPES:
        raise ValueError(f"unknown scale type {scales!r}; choose one of {', '.join(SCALE_DTYPES)}")
    if scales == "f16" and block is None:
        raise ValueError("float16 scales need per-block scales (--int8-block)")
    if block is not None and restore != "cast-mul":
        raise ValueError("per-block scales need restore='cast-mul' (DequantizeLinear blocks need opset 21)")
    graph = proto.graph
    restores: list[onnx.NodeProto] = []
    int8, half = [], []
    gptq = 0
    for init, array, users in _stored_matrices(graph):
        if any(part in init.name for part in keep_fp16):
            restores.append(_store_fp16(graph, init, array))
            half.append(init.name)
            continue
        hessian = (hessians or {}).get(init.name)
        restores += _store_int8(
            graph, init, array, _rows_are_channels(users), block, restore, hessian, SCALE_DTYPES[scales], act_order
        )
        int8.append(init.name)
        gptq += hessian is not None
    nodes = restores + list(graph.node)  # restores first: their outputs keep the old initializer names
    del graph.node[:]
    graph.node.extend(nodes)
    return {
        "scheme": "int8-weights",
        "weights": (
            f"int8 symmetric, a {'float16' if scales == 'f16' else 'float32'} scale per "
            f"{f'{block} entries of each ' if block else ''}output channel, "
            "restored to float32 when the session starts (float16: fp16_matrices)"
        ),
        "activations": "float32",
        "block": block,
        **({"scales": "float16"} if scales == "f16" else {}),
        "rounding": "gptq" if gptq else "nearest",
        **({"act_order": act_order} if gptq else {}),
        **({"gptq_matrices": gptq} if gptq else {}),
        "restore": restore,
        "int8_matrices": len(int8),
        "fp16_matrices": half,
    }


def _store_int8(
    graph: onnx.GraphProto,
    init: onnx.TensorProto,
    array: np.ndarray,
    rows_are_channels: bool,
    block: int | None,
    restore: str,
    hessian: np.ndarray | None = None,
    scale_dtype=np.float32,
    act_order: bool = True,
) -> list[onnx.NodeProto]:
    """Replaces `init` by its int8 form and scales (GPTQ with `hessian`, a MatMul weight's); returns
    the nodes restoring it under its name."""
    name = init.name
    # Quantized as [reduction, channel]: transposed when the rows are the channels.
    if hessian is not None and not rows_are_channels:
        q, scale = gptq_columns(array, hessian, block, act_order=act_order, scale_dtype=scale_dtype)
    else:
        q, scale = quantize_blocks(array.T if rows_are_channels else array, block, scale_dtype)
    if rows_are_channels:
        q = q.T
        scale = scale.T if block is None else scale.transpose(2, 0, 1)  # [R, 1] or [R, C / block, 1]
    graph.initializer.remove(init)
    q_name, s_name = name + ".int8", name + ".scale"
    if block is not None:  # [K / B, B, N] or [R, C / B, B], against the scale's shape
        q = q.reshape(q.shape[0], -1, block) if rows_are_channels else q.reshape(-1, block, q.shape[1])
    graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(q), q_name))
    if restore == "dequantize-linear":
        graph.initializer.append(numpy_helper.from_array(scale.reshape(-1), s_name))
        zero = numpy_helper.from_array(np.zeros(scale.size, np.int8), name + ".zero_point")
        graph.initializer.append(zero)
        axis = 0 if rows_are_channels else 1
        return [helper.make_node("DequantizeLinear", [q_name, s_name, zero.name], [name], name=name + ".dq", axis=axis)]
    graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(scale), s_name))
    widen = []
    if scale.dtype != np.float32:  # float16 scales, widened as the weights are
        widen = [helper.make_node("Cast", [s_name], [s_name + ".f32"], name=s_name + ".cast", to=TensorProto.FLOAT)]
        s_name += ".f32"
    cast = helper.make_node("Cast", [q_name], [name + ".f32"], name=name + ".cast", to=TensorProto.FLOAT)
    if block is None:
        return [cast, helper.make_node("Mul", [name + ".f32", s_name], [name], name=name + ".scale")]
    shape = numpy_helper.from_array(np.array(array.shape, np.int64), name + ".shape")
    graph.initializer.append(shape)
    return [
        *widen,
        cast,
        helper.make_node("Mul", [name + ".f32", s_name], [name + ".blocks"], name=name + ".scale"),
        helper.make_node("Reshape", [name + ".blocks", shape.name], [name], name=name + ".reshape"),
    ]


def gptq_columns(
    weight: np.ndarray,
    hessian: np.ndarray,
    block: int | None = None,
    damp: float = 0.01,
    act_order: bool = True,
    scale_dtype=np.float32,
) -> tuple[np.ndarray, np.ndarray]:
    """GPTQ (Frantar et al. 2022) for a MatMul weight [K, N] read as x @ weight: int8 values and
    scales in quantize_blocks' layout that keep x @ dequantised close to x @ weight for inputs with
    second moments `hessian` (E[x x^T], [K, K]), where rounding each weight to nearest only keeps
    each weight close. The K input rows are quantized in turn, each one's rounding error pushed onto
    the rows not yet quantized through the inverse Hessian's Cholesky factor. `act_order` (default):
    rows in order of decreasing input energy, so that the rows that matter most are rounded first
    and the later ones absorb their error (default model, validation lines: the rms change of
    fp32's top-1 margin 7 % lower at block 8 than in row order; docs/int8-weights.md). Scales: per channel
    (block None), a scale per column from the weight's own maximum; per block in row order, each
    block's scale from its weights as updated so far; per block with act order, each block's scale
    fixed beforehand from the original weights ("static groups": a block's rows are not
    consecutive in that order; updated weights beyond the scale clip to ±127). `damp` × mean
    diagonal is added to the Hessian (inputs that never vary). `scale_dtype` as quantize_blocks'
    (the scales are returned in it). Raises ValueError for a block not dividing K, or float16
    scales per channel."""
    rows, cols = weight.shape
    if block is not None and (block <= 0 or rows % block):
        raise ValueError(f"block size {block} does not divide the reduction axis ({rows})")
    if block is None and scale_dtype != np.float32:
        raise ValueError("float16 scales need per-block scales (a block size)")
    w = weight.astype(np.float64).copy()
    h = hessian.astype(np.float64).copy()
    dead = np.diag(h) == 0  # inputs that are always 0: their weights do not matter
    h[dead, dead] = 1.0
    w[dead] = 0.0
    h += damp * np.mean(np.diag(h)) * np.eye(rows)
    static = block is not None and act_order
    if static:  # [K / block, N], as quantize_blocks computes them, as stored
        fixed = quantize_blocks(w.astype(np.float32), block, scale_dtype)[1][:, 0, :].astype(np.float64)
    order = np.argsort(-np.diag(h), kind="stable") if act_order else np.arange(rows)
    w, h = w[order], h[np.ix_(order, order)]
    # Upper Cholesky factor of H^-1: row i's error spreads to rows > i by u[i, i + 1:] / u[i, i].
    u = np.linalg.cholesky(np.linalg.inv(h)).T
    q = np.zeros((rows, cols), np.int8)
    scales = []
    scale = None
    for i in range(rows):
        if static:
            scale = fixed[order[i] // block]
        elif scale is None or (block is not None and i % block == 0):
            part = w if block is None else w[i : i + block]
            scale = (np.abs(part).max(axis=0) / INT8_MAX).astype(np.float32)
            scale[scale == 0] = 1.0
            scale = stored_scale(scale, scale_dtype).astype(np.float64)  # the scale as stored
            scales.append(scale)
        q[i] = np.clip(np.rint(w[i] / scale), -INT8_MAX, INT8_MAX)
        error = (w[i] - q[i] * scale) / u[i, i]
        w[i + 1 :] -= np.outer(u[i, i + 1 :], error)
    inverse = np.argsort(order)
    if static:
        return q[inverse], fixed.astype(scale_dtype).reshape(rows // block, 1, cols)
    stacked = np.stack(scales).astype(scale_dtype)
    if block is None:
        return q[inverse], stacked.reshape(1, cols)
    return q[inverse], stacked.reshape(rows // block, 1, cols)


def calibration_hessians(model, proto: onnx.ModelProto, corpus_dir, lines: int = 2000, seed: int = 0) -> dict:
    """E[x x^T] of the input x of every MatMul weight of `proto` (an fp32 export of `model`):
    linear_input_hessians, keyed by initializer name, matched by value: an initializer equal to an
    nn.Linear weight transposed, or to a block of its columns (the lean graph's GeGLU value and
    gate halves of one Linear: the same input), gets that Linear's. Raises ValueError as
    linear_input_hessians does."""
    by_rows: dict[int, list[tuple[str, np.ndarray]]] = {}
    for init in proto.graph.initializer:
        if init.data_type == TensorProto.FLOAT and len(init.dims) == 2:
            by_rows.setdefault(init.dims[0], []).append((init.name, numpy_helper.to_array(init)))
    modules = dict(model.named_modules())
    hessians = {}
    for module_name, hessian in linear_input_hessians(model, corpus_dir, lines, seed).items():
        weight_t = modules[module_name].weight.detach().float().numpy().T
        for name, array in by_rows.get(weight_t.shape[0], []):
            width = array.shape[1]
            if weight_t.shape[1] % width == 0 and any(
                np.array_equal(array, weight_t[:, start : start + width])
                for start in range(0, weight_t.shape[1], width)
            ):
                hessians[name] = hessian
    return hessians


def linear_input_hessians(model, corpus_dir, lines: int = 2000, seed: int = 0) -> dict:
    """E[x x^T] of the input x of every nn.Linear of `model` (torch, a tiankong checkpoint's),
    keyed by module name, measured by running it on `lines` random lines of the training split of
    scripts/build-corpus's `corpus_dir` ([CLS] line [SEP], at most 128 tokens, one content token
    masked, as the runtime sees them), over their real tokens. Raises ValueError when the corpus
    was tokenized with another vocabulary than the model's."""
    from pathlib import Path

    import torch

    from .train_data import SPECIALS, Corpus

    corpus_dir = Path(corpus_dir)
    vocab_file = corpus_dir / "vocab.txt"
    model_vocab = model.config.vocab_size
    if not vocab_file.is_file() or len(vocab_file.read_text(encoding="utf-8").splitlines()) != model_vocab:
        raise ValueError(f"{corpus_dir}: no vocab.txt of the model's {model_vocab} tokens (scripts/build-corpus)")
    vocab = vocab_file.read_text(encoding="utf-8").splitlines()
    special = np.array([t in SPECIALS for t in vocab])
    cls_id, sep_id, mask_id = (vocab.index(t) for t in ("[CLS]", "[SEP]", "[MASK]"))
    corpus = Corpus(corpus_dir, "train")
    rng = np.random.default_rng(seed)
    sequences = []
    for index in rng.choice(corpus.num_lines, size=min(lines, corpus.num_lines), replace=False):
        ids = np.concatenate([[cls_id], corpus.line(int(index))[:126].astype(np.int64), [sep_id]])
        content = np.flatnonzero(~special[ids])
        if len(content):
            ids[rng.choice(content)] = mask_id
            sequences.append(ids)
    sums: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    state = {}
    hooks = []
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.Linear):
            continue

        def hook(_module, inputs, _output, name=name):
            x = inputs[0].detach().double()
            x = x[state["real"]] if x.shape[:2] == state["real"].shape else x.reshape(-1, x.shape[-1])
            sums[name] = sums.get(name, 0) + (x.T @ x).numpy()
            counts[name] = counts.get(name, 0) + x.shape[0]

        hooks.append(module.register_forward_hook(hook))
    table = model.bert.embeddings.word_embeddings.weight
    try:
        with torch.no_grad():
            sequences.sort(key=len)
            for start in range(0, len(sequences), 64):
                group = sequences[start : start + 64]
                width = max(len(ids) for ids in group)
                ids = torch.zeros(len(group), width, dtype=torch.long)
                real = torch.zeros(len(group), width, dtype=torch.bool)
                masks = torch.zeros(len(group), 1, dtype=torch.long)
                for row, seq in enumerate(group):
                    ids[row, : len(seq)] = torch.from_numpy(seq)
                    real[row, : len(seq)] = True
                    masks[row, 0] = int(np.flatnonzero(seq == mask_id)[0])
                state["real"] = real
                attention = real.long()
                model.head_hidden(table[ids], attention, torch.zeros_like(attention), masks)
    finally:
        for handle in hooks:
            handle.remove()
    return {name: sums[name] / counts[name] for name in sums}
