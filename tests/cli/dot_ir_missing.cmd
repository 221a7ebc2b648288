ir dot_model.nn --graph no_such_graph
