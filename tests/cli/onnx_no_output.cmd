onnx dot_model.nn
