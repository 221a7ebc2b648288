check print_args.nn
