print_args.nn one two
