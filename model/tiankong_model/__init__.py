"""tiankong model pipeline: BERT-MLM with Hugging Face parameter names, checkpoint I/O,
ONNX export with mask-only logits, our own INT8 quantizer, vocab pruning, validation."""
