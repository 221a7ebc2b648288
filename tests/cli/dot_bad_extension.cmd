dot dot_model.nn --graph train_step -o train_step.jpg
