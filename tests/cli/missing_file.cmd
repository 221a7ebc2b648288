no_such_file.nn
