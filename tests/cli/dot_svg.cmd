dot dot_model.nn --graph train_step --collapse 1 -o /tmp/nn_cli_test_dot.svg
