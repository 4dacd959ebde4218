"""Writes hand-built faulty ONNX graphs for tests/reliability/model-faults.test.ts.

Each graph takes the inputs a mask-only tiankong model takes (input_ids, attention_mask,
mask_positions: int64) unless its fault is about the inputs, and returns `logits`:
  wrong-vocab.onnx      logits [1, masks, 1000] while the vocab has 1626 tokens
  nan-logits.onnx       logits [1, masks, VOCAB] all NaN
  no-mask-positions.onnx  input `positions` instead of `mask_positions`
  unsupported-op.onnx   a node of an op no runtime knows (com.example.FancyGelu)
  int32-inputs.onnx     input_ids declared int32 (the runtime feeds int64)
Usage: /usr/bin/python3 make-faulty-models.py OUT_DIR VOCAB_SIZE
"""

import os
import sys

import onnx
from onnx import TensorProto, helper

out_dir, vocab = sys.argv[1], int(sys.argv[2])
os.makedirs(out_dir, exist_ok=True)


def inputs(mask_name="mask_positions", ids_type=TensorProto.INT64):
    return [
        helper.make_tensor_value_info("input_ids", ids_type, [1, "seq"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "seq"]),
        helper.make_tensor_value_info(mask_name, TensorProto.INT64, [1, "masks"]),
    ]


def constant_logits(width, value, mask_name="mask_positions", extra_nodes=()):
    """logits = a [1, masks, width] tensor filled with `value` (shape taken from the mask input)."""
    nodes = [
        helper.make_node("Shape", [mask_name], ["mask_shape"]),
        helper.make_node("Constant", [], ["width"], value=helper.make_tensor("w", TensorProto.INT64, [1], [width])),
        helper.make_node("Concat", ["mask_shape", "width"], ["logits_shape"], axis=0),
        helper.make_node(
            "ConstantOfShape",
            ["logits_shape"],
            ["logits"],
            value=helper.make_tensor("v", TensorProto.FLOAT, [1], [value]),
        ),
        *extra_nodes,
    ]
    return nodes


def save(name, nodes, graph_inputs, opsets=(("", 17),)):
    graph = helper.make_graph(
        nodes, name, graph_inputs, [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "masks", None])]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 8
    onnx.save(model, os.path.join(out_dir, name))


save("wrong-vocab.onnx", constant_logits(1000, 0.0), inputs())
save("nan-logits.onnx", constant_logits(vocab, float("nan")), inputs())
save("no-mask-positions.onnx", constant_logits(vocab, 0.0, mask_name="positions"), inputs("positions"))
# ConstantOfShape → FancyGelu (unknown) → logits.
fancy = constant_logits(vocab, 0.0)
fancy[-1].output[0] = "pre"
fancy.append(helper.make_node("FancyGelu", ["pre"], ["logits"], domain="com.example"))
save("unsupported-op.onnx", fancy, inputs(), opsets=(("", 17), ("com.example", 1)))
save("int32-inputs.onnx", constant_logits(vocab, 0.0), inputs(ids_type=TensorProto.INT32))
print("wrote", sorted(os.listdir(out_dir)))
