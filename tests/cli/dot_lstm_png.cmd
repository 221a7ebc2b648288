dot dot_lstm_model.nn --graph step --collapse 1 -o /tmp/nn_cli_test_dot_lstm.png
