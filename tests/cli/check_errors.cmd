check bad_names.nn
