dot dot_lstm_model.nn --graph step -o /tmp/nn_cli_test_dot_lstm.svg
