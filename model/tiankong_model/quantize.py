"""Our INT8 dynamic quantizer for exported BERT graphs (the onnxruntime Python quantizer is
not installable here).

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


def store_weights_fp16(proto: onnx.ModelProto) -> dict:
    """Stores every constant float matrix (MatMul/Gemm weights, embedding tables) as float16 with a
    Cast back to float32 in front of its consumers: half the bytes of fp32 on disk and over the
    network; ONNX Runtime folds the Casts when the session starts, so inference runs fp32 kernels
    whose weights are packed once (unlike dynamic INT8, whose wasm kernel re-packs every run).
    Which one is faster per model is measured (scripts/bench-model --patterns), not assumed."""
    graph = proto.graph
    initializers = {init.name: init for init in graph.initializer}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    converted, casts = 0, []
    for name, init in list(initializers.items()):
        array = numpy_helper.to_array(init)
        if array.dtype != np.float32 or array.ndim != 2 or array.size < 4096:
            continue
        users = consumers.get(name, [])
        if not users or not all(u.op_type in ("MatMul", "Gemm", "Gather", "Transpose") for u in users):
            continue
        half = numpy_helper.from_array(array.astype(np.float16), name + ".fp16")
        graph.initializer.remove(init)
        graph.initializer.append(half)
        casts.append(helper.make_node("Cast", [half.name], [name], name=name + ".cast", to=TensorProto.FLOAT))
        converted += 1
    nodes = casts + list(graph.node)  # Casts first: their outputs keep the old initializer names
    del graph.node[:]
    graph.node.extend(nodes)
    return {
        "scheme": "fp16-weights",
        "weights": "float16 stored, cast to float32 at session start",
        "activations": "float32",
        "converted_matrices": converted,
    }
