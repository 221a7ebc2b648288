ir dot_model.nn --no-pass no_such_pass
