dot dot_model.nn --color memory --raw -o /tmp/nn_cli_test_dot_memory.png
