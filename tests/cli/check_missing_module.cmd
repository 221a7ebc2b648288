check missing_module.nn
