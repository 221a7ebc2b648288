onnx dot_model.nn --graph train_step -o /tmp/nn_cli_test_onnx_trains.onnx
