run print_args.nn x
