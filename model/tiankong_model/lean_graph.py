"""A lean ONNX graph of `BertForMaskedLM`, written node by node with onnx.helper from the weights
(the alternative to torch.onnx.export in onnx_graph.py, same graph kinds, inputs and outputs).

Why: at the sizes the runtime sees (16–64 tokens, a 4 × 224 default model) ONNX Runtime's wasm
build spends much of a run on operator overhead, not arithmetic; the torch export has ~190 nodes
after ORT's own optimizer (Shape→Gather→Unsqueeze→Concat chains for every reshape, a Range and an
Expand for the positions, a mask built with Sub/Mul at run time, attention as
Reshape/Transpose/MatMul/Div/Add/Softmax per layer, LayerNorms and residual Adds apart, because
ORT's fusions do not match pre-LN blocks without biases). This graph uses ONNX Runtime's fused
contrib operators, checked to run in onnxruntime-web's wasm build and in onnxruntime-node
(model/tests/test_lean_graph.py):

- com.microsoft.MultiHeadAttention: Q/K/V [B, S, hidden] in, heads split, scaled, masked by the
  attention mask itself (key_padding_mask, int32 [B, S]) and merged inside one kernel; the
  projection biases go in as its `bias` input. (com.microsoft.Attention would also project, but
  reads its weights as an input no weight-compression pass here understands, crashes native ORT
  1.30 without a bias, and packed QKV is not implemented for CPU in MultiHeadAttention.)
- com.microsoft.SkipLayerNormalization: residual add + bias + LayerNorm in one op; its fourth
  output (the sum before normalising) is the residual stream of a pre-LN block, so a pre-LN layer
  needs one such op per sub-block, like a post-LN one. The embedding sum is one too: the position
  rows broadcast as its `skip` ([S, hidden]).
- com.microsoft.BiasGelu / FastGelu / Gelu for the FFN and the MLM head's transform.
- No shape arithmetic: no Reshape at all (MultiHeadAttention takes [B, S, hidden]); the position
  rows are Gather(table, Slice(0..max−1, 0, S)) where S comes from one Shape(start=1, end=2);
  the type-0 token-type row is added into the position table at export time when the graph has
  no token_type_ids input.
- The last layer runs at the masks only (core and mask-only graphs): its keys and values need
  every position, but its queries, output projection, FFN and the final LayerNorm only the masked
  rows the graph returns — exact, and one layer's FFN less work per fill.

Every weight matrix stays a plain MatMul B input (2-D initializer), the tied decoder stays
MatMul(Transpose(word_embeddings)) and the tables stay Gather inputs, so quantize.py's passes
(dynamic INT8, fp16- and int8-stored weights) apply unchanged.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .bert import BertForMaskedLM

OPSET = 17
MS_DOMAIN = "com.microsoft"
WORD_EMBEDDINGS = "bert.embeddings.word_embeddings.weight"
GRAPH_KINDS = ("core", "mask-only", "full")  # as onnx_graph.GRAPH_KINDS (which imports this module)


class _Builder:
    """Accumulates nodes and initializers; fresh names per prefix."""

    def __init__(self, state: dict[str, np.ndarray]):
        self.state = state
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: dict[str, onnx.TensorProto] = {}

    def weight(self, name: str, array: np.ndarray | None = None) -> str:
        """Registers initializer `name` (from the state dict unless `array` is given) once."""
        if name not in self.initializers:
            value = self.state[name] if array is None else array
            self.initializers[name] = numpy_helper.from_array(np.ascontiguousarray(value), name)
        return name

    def linear_t(self, prefix: str) -> str:
        """A Linear's weight transposed to [in, out] (MatMul's B), named like torch's export."""
        return self.weight(prefix + ".weight_t", self.state[prefix + ".weight"].T)

    def node(self, op: str, inputs: list[str], name: str, outputs: int | list[str] = 1, **attrs) -> list[str]:
        """Appends a node named `name`; returns its output names (`name` + ":i" unless given)."""
        names = [f"{name}:{i}" for i in range(outputs)] if isinstance(outputs, int) else outputs
        domain = MS_DOMAIN if op in _CONTRIB else ""
        self.nodes.append(helper.make_node(op, inputs, names, name=name, domain=domain, **attrs))
        return names

    def one(self, op: str, inputs: list[str], name: str, **attrs) -> str:
        return self.node(op, inputs, name, 1, **attrs)[0]


_CONTRIB = {"MultiHeadAttention", "SkipLayerNormalization", "BiasGelu", "FastGelu", "Gelu"}


def _has(state: dict, name: str) -> bool:
    return name in state


def export_lean(
    model: BertForMaskedLM, kind: str = "core", token_type_ids: bool = False, fuse_projections: bool = False
) -> onnx.ModelProto:
    """The lean fp32 graph of `model` for `kind` (GRAPH_KINDS), with the torch export's interface:
    the same input names, dtypes and dynamic axes (batch, sequence, masks) and the same output
    (`hidden` [B, M, hidden] for core, `logits` [B, M, vocab] for mask-only, [B, S, vocab] for full).

    Supports post-LN BERT (Hugging Face checkpoints) and the pre-LN / no-projection-bias / GeGLU
    variants of bert.py. `fuse_projections`: Q/K/V (K/V where the queries are the masked rows) and
    the two GeGLU halves as one MatMul each + Split instead of one MatMul per output (fewer, wider
    matrix products; which is faster is measured, bench/lean-bench.mjs). Raises ValueError for an
    unknown kind."""
    if kind not in GRAPH_KINDS:
        raise ValueError(f"graph kind must be one of {GRAPH_KINDS}, got {kind!r}")
    config = model.config
    state = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    b = _Builder(state)
    eps = float(config.layer_norm_eps)
    hidden, heads = config.hidden_size, config.num_attention_heads
    pre_norm = config.layer_norm_position == "pre"
    with_types = token_type_ids or kind == "full"
    tanh_gelu = config.hidden_act in ("gelu_new", "gelu_pytorch_tanh")

    inputs = [
        helper.make_tensor_value_info(
            "inputs_embeds" if kind == "core" else "input_ids",
            TensorProto.FLOAT if kind == "core" else TensorProto.INT64,
            ["batch", "sequence", hidden] if kind == "core" else ["batch", "sequence"],
        ),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
    ]
    if with_types:
        inputs.append(helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "sequence"]))
    if kind != "full":
        inputs.append(helper.make_tensor_value_info("mask_positions", TensorProto.INT64, ["batch", "masks"]))
    first = inputs[0].name

    # Embeddings: words (+ token types) + positions, LayerNorm. Positions are the first S rows of the
    # table, S read once from the input's shape; with type 0 built in, its row is added to the table
    # here (one table, one add fewer per run).
    emb = "bert.embeddings"
    positions = state[f"{emb}.position_embeddings.weight"]
    if with_types:
        position_table = b.weight(f"{emb}.position_embeddings.weight")
    else:
        position_table = b.weight(
            f"{emb}.position_embeddings_with_type0.weight", positions + state[f"{emb}.token_type_embeddings.weight"][0]
        )
    sequence = b.one("Shape", [first], "/embeddings/sequence_length", start=1, end=2)
    arange = b.weight("position_ids", np.arange(positions.shape[0], dtype=np.int64))
    zero = b.weight("zero_1d", np.zeros(1, dtype=np.int64))
    position_ids = b.one("Slice", [arange, zero, sequence], "/embeddings/position_ids")
    position_rows = b.one("Gather", [position_table, position_ids], "/embeddings/position_rows")
    if kind == "core":
        words = first
    else:
        words = b.one("Gather", [b.weight(WORD_EMBEDDINGS), first], "/embeddings/word_embeddings")
    if with_types:
        types = b.one(
            "Gather", [b.weight(f"{emb}.token_type_embeddings.weight"), "token_type_ids"], "/embeddings/types"
        )
        words = b.one("Add", [words, types], "/embeddings/add_types")
    x = b.node(
        "SkipLayerNormalization",
        [words, position_rows, b.weight(f"{emb}.LayerNorm.weight"), b.weight(f"{emb}.LayerNorm.bias")],
        "/embeddings/LayerNorm",
        epsilon=eps,
    )[0]
    mask = b.one("Cast", ["attention_mask"], "/attention_mask_int32", to=TensorProto.INT32)
    gather_index = None
    if kind != "full":
        axis = b.weight("last_axis", np.array([-1], dtype=np.int64))
        gather_index = b.one("Unsqueeze", ["mask_positions", axis], "/mask_index")

    def at_masks(tensor: str, name: str) -> str:
        return b.one("GatherND", [tensor, gather_index], name, batch_dims=1)

    def ln_inputs(prefix: str) -> list[str]:
        return [b.weight(prefix + ".weight"), b.weight(prefix + ".bias")]

    def bias_or_empty(name: str) -> str:
        return b.weight(name) if _has(state, name) else ""

    layers = config.num_hidden_layers
    # Pre-LN: the stream `x` is unnormalised and `normed` is the block's LayerNorm of it; each
    # SkipLayerNormalization yields both (outputs 0 and 3). Post-LN: `x` is already normalised.
    normed = None
    if pre_norm:
        normed = b.one(
            "LayerNormalization",
            [x, *ln_inputs("bert.encoder.layer.0.layernorm_before")],
            "/layer.0/layernorm_before",
            axis=-1,
            epsilon=eps,
        )
    for i in range(layers):
        p = f"bert.encoder.layer.{i}"
        name = f"/layer.{i}"
        last = i == layers - 1
        source = normed if pre_norm else x  # what Q, K and V read
        query_source, residual = source, x
        if last and kind != "full":  # only the masked rows leave the graph
            query_source = at_masks(source, f"{name}/query_rows")
            # post-LN: queries and residual are the same rows (one gather, not two)
            residual = query_source if source == x else at_masks(x, f"{name}/residual_rows")
        att = f"{p}.attention.self"
        if fuse_projections and query_source == source:
            q, k, v = _fused_matmul(
                b, source, [f"{att}.query", f"{att}.key", f"{att}.value"], f"{att}.qkv", f"{name}/qkv"
            )
        elif fuse_projections:
            q = b.one("MatMul", [query_source, b.linear_t(f"{att}.query")], f"{name}/query")
            k, v = _fused_matmul(b, source, [f"{att}.key", f"{att}.value"], f"{att}.kv", f"{name}/kv")
        else:
            q = b.one("MatMul", [query_source, b.linear_t(f"{att}.query")], f"{name}/query")
            k = b.one("MatMul", [source, b.linear_t(f"{att}.key")], f"{name}/key")
            v = b.one("MatMul", [source, b.linear_t(f"{att}.value")], f"{name}/value")
        qkv_bias = ""
        if _has(state, f"{att}.query.bias"):
            qkv_bias = b.weight(
                f"{att}.qkv.bias", np.concatenate([state[f"{att}.{n}.bias"] for n in ("query", "key", "value")])
            )
        context = b.one("MultiHeadAttention", [q, k, v, qkv_bias, mask], f"{name}/attention", num_heads=heads)
        projected = b.one("MatMul", [context, b.linear_t(f"{p}.attention.output.dense")], f"{name}/attention_output")
        out_bias = bias_or_empty(f"{p}.attention.output.dense.bias")
        if pre_norm:
            # normed2 = LN_after(residual + projected + bias); x = that sum (output 3)
            outs = b.node(
                "SkipLayerNormalization",
                [projected, residual, *ln_inputs(f"{p}.layernorm_after"), out_bias],
                f"{name}/layernorm_after",
                outputs=[f"{name}/layernorm_after:0", "", "", f"{name}/attention_residual"],
                epsilon=eps,
            )
            ffn_in, x = outs[0], outs[3]
        else:
            x = b.one(
                "SkipLayerNormalization",
                [projected, residual, *ln_inputs(f"{p}.attention.output.LayerNorm"), out_bias],
                f"{name}/attention_output_LayerNorm",
                epsilon=eps,
            )
            ffn_in = x
        activated = _ffn(b, state, config, p, name, ffn_in, tanh_gelu, fuse_projections)
        down = b.one("MatMul", [activated, b.linear_t(f"{p}.output.dense")], f"{name}/output")
        down_bias = bias_or_empty(f"{p}.output.dense.bias")
        if pre_norm:
            next_ln = "bert.encoder.final_layer_norm" if last else f"bert.encoder.layer.{i + 1}.layernorm_before"
            outputs = [f"{name}/next_norm"] if last else [f"{name}/next_norm", "", "", f"{name}/residual"]
            outs = b.node(
                "SkipLayerNormalization",
                [down, x, *ln_inputs(next_ln), down_bias],
                f"{name}/next_LayerNorm",
                outputs=outputs,
                epsilon=eps,
            )
            normed, x = outs[0], (outs[0] if last else outs[3])
        else:
            x = b.one(
                "SkipLayerNormalization",
                [down, x, *ln_inputs(f"{p}.output.LayerNorm"), down_bias],
                f"{name}/output_LayerNorm",
                epsilon=eps,
            )
    sequence_output = normed if pre_norm else x

    # MLM head transform: dense + gelu (bias fused) + LayerNorm.
    t = "cls.predictions.transform"
    dense = b.one("MatMul", [sequence_output, b.linear_t(f"{t}.dense")], "/head/dense")
    gelu = b.one("FastGelu" if tanh_gelu else "BiasGelu", [dense, b.weight(f"{t}.dense.bias")], "/head/gelu")
    transformed = b.one(
        "LayerNormalization", [gelu, *ln_inputs(f"{t}.LayerNorm")], "/head/LayerNorm", axis=-1, epsilon=eps
    )
    if kind == "core":
        output_name, result = "hidden", transformed
        output_dims = ["batch", "masks", hidden]
    else:
        decoder = b.one("Transpose", [b.weight(WORD_EMBEDDINGS)], "tied_decoder_transpose", perm=[1, 0])
        scores = b.one("MatMul", [transformed, decoder], "/head/decoder")
        result = b.one("Add", [scores, b.weight("cls.predictions.bias")], "/head/decoder_bias")
        output_name = "logits"
        output_dims = ["batch", "sequence" if kind == "full" else "masks", config.vocab_size]
    b.node("Identity", [result], "/output", outputs=[output_name])

    graph = helper.make_graph(
        b.nodes,
        f"tiankong-lean-{kind}",
        inputs,
        [helper.make_tensor_value_info(output_name, TensorProto.FLOAT, output_dims)],
        initializer=list(b.initializers.values()),
    )
    proto = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MS_DOMAIN, 1)],
        producer_name="tiankong lean_graph",
    )
    proto.ir_version = 8  # onnxruntime 1.30 and onnx 1.12 both read it
    _drop_output_identity(proto)
    onnx.checker.check_model(proto)
    return proto


def _fused_matmul(b: _Builder, x: str, linears: list[str], fused: str, name: str) -> list[str]:
    """x · [W1 | W2 | …] as one MatMul, split back into one output per Linear (biases not included)."""
    weights = [b.state[f"{linear}.weight"].T for linear in linears]
    product = b.one("MatMul", [x, b.weight(f"{fused}.weight_t", np.concatenate(weights, axis=1))], name)
    sizes = b.weight(f"{fused}.split", np.array([w.shape[1] for w in weights], dtype=np.int64))
    return b.node("Split", [product, sizes], f"{name}/split", outputs=len(linears), axis=-1)


def _ffn(b: _Builder, state: dict, config, p: str, name: str, x: str, tanh_gelu: bool, fuse: bool) -> str:
    """The FFN's activation output: gelu(x·W + b) (BERT) or value · gelu(gate) (GeGLU), the
    GeGLU halves as two MatMuls (or, `fuse`, one MatMul + Split), biases fused into the Gelu kernels."""
    dense = f"{p}.intermediate.dense"
    weight = state[dense + ".weight"]  # [width, hidden]
    bias = state.get(dense + ".bias")
    gelu_op = "FastGelu" if tanh_gelu else "BiasGelu"
    if config.ffn_type != "geglu":
        up = b.one("MatMul", [x, b.linear_t(dense)], f"{name}/intermediate")
        if bias is None:
            return b.one("FastGelu" if tanh_gelu else "Gelu", [up], f"{name}/gelu")
        return b.one(gelu_op, [up, b.weight(dense + ".bias")], f"{name}/gelu")
    half = weight.shape[0] // 2
    if fuse:
        value, gate = _fused_matmul_rows(b, x, weight, half, f"{dense}.weight_t", f"{name}/geglu_in")
    else:
        value = b.one("MatMul", [x, b.weight(f"{dense}.value.weight_t", weight[:half].T)], f"{name}/geglu_value")
        gate = b.one("MatMul", [x, b.weight(f"{dense}.gate.weight_t", weight[half:].T)], f"{name}/geglu_gate")
    if bias is None:
        activated = b.one("FastGelu" if tanh_gelu else "Gelu", [gate], f"{name}/gelu")
    else:
        activated = b.one(gelu_op, [gate, b.weight(f"{dense}.gate.bias", bias[half:])], f"{name}/gelu")
        value = b.one("Add", [value, b.weight(f"{dense}.value.bias", bias[:half])], f"{name}/geglu_value_bias")
    return b.one("Mul", [value, activated], f"{name}/geglu")


def _fused_matmul_rows(b: _Builder, x: str, weight: np.ndarray, half: int, name: str, node: str) -> list[str]:
    """x · weightᵀ as one MatMul split into its first `half` outputs and the rest (GeGLU value, gate)."""
    product = b.one("MatMul", [x, b.weight(name, weight.T)], node)
    sizes = b.weight(name + ".split", np.array([half, weight.shape[0] - half], dtype=np.int64))
    return b.node("Split", [product, sizes], f"{node}/split", outputs=2, axis=-1)


def _drop_output_identity(proto: onnx.ModelProto) -> None:
    """Renames the last node's output to the graph output instead of keeping an Identity."""
    graph = proto.graph
    identity = graph.node[-1]
    source, target = identity.input[0], identity.output[0]
    del graph.node[-1]
    for node in graph.node:
        node.output[:] = [target if o == source else o for o in node.output]
        node.input[:] = [target if i == source else i for i in node.input]


def op_counts(proto: onnx.ModelProto) -> dict[str, int]:
    """Operator counts of a graph ("domain:Op" for contrib ops), most frequent first."""
    counts: dict[str, int] = {}
    for node in proto.graph.node:
        key = f"{node.domain}:{node.op_type}" if node.domain else node.op_type
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))
