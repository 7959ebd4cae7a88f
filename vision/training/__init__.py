"""Training the card models (needs the `train` extra: torch, onnx); never imported at run time."""
