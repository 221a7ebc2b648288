dot dot_model.nn --color rainbow -o /tmp/nn_cli_test_dot_bad.svg
