ir dot_model.nn --graph trainstep
