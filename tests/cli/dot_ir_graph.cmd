ir dot_model.nn --graph double
