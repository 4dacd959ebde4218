"""ONNX export of `BertForMaskedLM`, fp32 before quantization, in one of three graph kinds:

- "core" (the runtime's default): input embeddings in (the C++ core gathers them from head.bin),
  the MLM head's transformed hidden state at the masks out; the core multiplies it by the tied
  embedding table (head.py). The table is stored once, in head.bin, not in the graph.
- "mask-only": token ids in, logits at the masks out (the whole network in ONNX Runtime).
- "full": the standard BERT-MLM graph, logits at every position (transformers.js-compatible).

Each kind comes in two forms with the same interface: the torch export of bert.py (the default,
what ships) and, with `lean=True`, lean_graph.py's graph written with ONNX Runtime's fused
contrib operators (fewer, larger kernels; see that module for why and what).
"""

from __future__ import annotations

import io

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper

from .bert import BertForMaskedLM
from .lean_graph import export_lean

OPSET = 17  # LayerNormalization is a single op from 17 on; onnxruntime-web runs it
WORD_EMBEDDINGS = "bert.embeddings.word_embeddings.weight"


class _MaskOnlyLM(torch.nn.Module):
    """(input_ids, attention_mask[, token_type_ids], mask_positions) -> logits [batch, n_masks, vocab]."""

    def __init__(self, model: BertForMaskedLM, token_type_ids: bool):
        super().__init__()
        self.model, self.token_type_ids = model, token_type_ids

    def forward(self, input_ids, attention_mask, *rest):
        token_type_ids, mask_positions = rest if self.token_type_ids else (None, rest[0])
        return self.model(input_ids, attention_mask, token_type_ids, mask_positions)


class _CoreHeadLM(torch.nn.Module):
    """(inputs_embeds, attention_mask[, token_type_ids], mask_positions) -> hidden [batch, n_masks, hidden]."""

    def __init__(self, model: BertForMaskedLM, token_type_ids: bool):
        super().__init__()
        self.model, self.token_type_ids = model, token_type_ids

    def forward(self, inputs_embeds, attention_mask, *rest):
        token_type_ids, mask_positions = rest if self.token_type_ids else (torch.zeros_like(attention_mask), rest[0])
        return self.model.head_hidden(inputs_embeds, attention_mask, token_type_ids, mask_positions)


class _FullLogitsLM(torch.nn.Module):
    """(input_ids, attention_mask, token_type_ids) -> logits [batch, sequence, vocab]."""

    def __init__(self, model: BertForMaskedLM):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.model(input_ids, attention_mask, token_type_ids)


GRAPH_KINDS = ("core", "mask-only", "full")


def graph_inputs(kind: str, token_type_ids: bool) -> list[str]:
    """Input names of the exported graph, in order."""
    if kind == "full":
        return ["input_ids", "attention_mask", "token_type_ids"]
    first = "inputs_embeds" if kind == "core" else "input_ids"
    return [first, "attention_mask", *(["token_type_ids"] if token_type_ids else []), "mask_positions"]


def graph_output(kind: str) -> str:
    """Output name of the exported graph."""
    return "hidden" if kind == "core" else "logits"


def export_fp32(
    model: BertForMaskedLM, kind: str = "core", token_type_ids: bool = False, lean: bool = False
) -> onnx.ModelProto:
    """Traces `model` to an fp32 ONNX graph (opset 17) of `kind` (GRAPH_KINDS) with dynamic batch,
    sequence and mask axes. With logits in the graph, the transposed copy of the tied embedding
    torch writes for the decoder is replaced by a Transpose of the embedding table itself.
    `lean`: lean_graph.export_lean's graph instead (same inputs and output, contrib operators)."""
    if kind not in GRAPH_KINDS:
        raise ValueError(f"graph kind must be one of {GRAPH_KINDS}, got {kind!r}")
    if lean:
        return export_lean(model, kind, token_type_ids=token_type_ids)
    names = graph_inputs(kind, token_type_ids)
    output = graph_output(kind)
    batch, seq = 1, 8  # trace shapes only: every axis is exported as dynamic
    generator = torch.Generator().manual_seed(0)
    examples = {
        "input_ids": (torch.arange(5, 5 + seq) % model.config.vocab_size).unsqueeze(0),
        "inputs_embeds": torch.randn(batch, seq, model.config.hidden_size, generator=generator) * 0.02,
        "attention_mask": torch.ones(batch, seq, dtype=torch.int64),
        "token_type_ids": torch.zeros(batch, seq, dtype=torch.int64),
        "mask_positions": torch.tensor([[1, 4]], dtype=torch.int64),
    }
    dynamic_axes = {
        "input_ids": {0: "batch", 1: "sequence"},
        "inputs_embeds": {0: "batch", 1: "sequence"},
        "attention_mask": {0: "batch", 1: "sequence"},
        "token_type_ids": {0: "batch", 1: "sequence"},
        "mask_positions": {0: "batch", 1: "masks"},
        output: {0: "batch", 1: "sequence" if kind == "full" else "masks"},
    }
    wrapper = {
        "full": lambda: _FullLogitsLM(model),
        "mask-only": lambda: _MaskOnlyLM(model, token_type_ids),
        "core": lambda: _CoreHeadLM(model, token_type_ids),
    }[kind]()
    buffer = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(
            wrapper.eval(),
            tuple(examples[n] for n in names),
            buffer,
            opset_version=OPSET,
            input_names=names,
            output_names=[output],
            dynamic_axes={n: dynamic_axes[n] for n in [*names, output]},
            do_constant_folding=True,
        )
    proto = onnx.load_from_string(buffer.getvalue())
    _name_initializers(proto)
    _bypass_constant_identities(proto)
    if kind != "core":
        tie_decoder_to_embedding(proto)
    onnx.checker.check_model(proto)
    return proto


def _name_initializers(proto: onnx.ModelProto) -> None:
    """Gives initializers their parameter names: drops the wrapper's `model.` prefix and
    names torch's anonymous transposed Linear weights (`onnx::MatMul_N`) after their node,
    e.g. `bert.encoder.layer.0.attention.self.query.weight_t`."""
    renames = {}
    for node in proto.graph.node:
        if node.op_type == "MatMul" and node.input[1].startswith("onnx::"):
            renames[node.input[1]] = (
                node.name.strip("/").removeprefix("model/").removesuffix("/MatMul").replace("/", ".") + ".weight_t"
            )
    for init in proto.graph.initializer:
        renames.setdefault(init.name, init.name.removeprefix("model."))
    for init in proto.graph.initializer:
        init.name = renames[init.name]
    for node in proto.graph.node:
        node.input[:] = [renames.get(name, name) for name in node.input]


def _bypass_constant_identities(proto: onnx.ModelProto) -> None:
    """Removes the Identity nodes torch emits when it deduplicates equal parameters (e.g.
    the all-zero biases of a fresh model), so consumers read the initializer directly and
    bias adds stay recognisable for the quantizer's fusions."""
    initializers = {init.name for init in proto.graph.initializer}
    outputs = {out.name for out in proto.graph.output}
    bypass = {
        node.output[0]: node.input[0]
        for node in proto.graph.node
        if node.op_type == "Identity" and node.input[0] in initializers and node.output[0] not in outputs
    }
    kept = [node for node in proto.graph.node if not (node.op_type == "Identity" and node.output[0] in bypass)]
    for node in kept:
        node.input[:] = [bypass.get(name, name) for name in node.input]
    del proto.graph.node[:]
    proto.graph.node.extend(kept)


def tie_decoder_to_embedding(proto: onnx.ModelProto) -> None:
    """Rewrites every MatMul whose weight initializer equals the transposed word embedding
    to read `Transpose(word_embeddings)` instead, and drops that copy (−vocab×hidden floats).

    Raises ValueError if the graph has no such MatMul (the decoder would then be untied)."""
    graph = proto.graph
    initializers = {init.name: init for init in graph.initializer}
    embedding = numpy_helper.to_array(initializers[WORD_EMBEDDINGS])
    transposed_name = WORD_EMBEDDINGS + ".T"
    copies = set()
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in initializers:
            continue
        weight = initializers[node.input[1]]
        if tuple(weight.dims) == embedding.T.shape and np.array_equal(numpy_helper.to_array(weight), embedding.T):
            copies.add(node.input[1])
            node.input[1] = transposed_name
    if not copies:
        raise ValueError("exported graph has no MatMul with the transposed word embedding (decoder not tied?)")
    for name in copies:
        graph.initializer.remove(initializers[name])
    position = next(i for i, n in enumerate(graph.node) if transposed_name in n.input)
    graph.node.insert(
        position,
        helper.make_node("Transpose", [WORD_EMBEDDINGS], [transposed_name], name="tied_decoder_transpose", perm=[1, 0]),
    )
