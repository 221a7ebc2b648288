check bad_syntax2.nn
