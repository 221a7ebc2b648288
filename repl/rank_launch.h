// nn --nproc N (SPEC §14): the same command line run as N ranks through
// mpiexec, with defaults that suit one machine.
#pragma once
#include "repl/cli.h"

namespace nn::repl {

// Replaces this process with mpiexec running N copies of this command line.
// Returns only when it cannot, with the exit code, after printing why.
int launch_ranks(const CliOptions& cli, int argc, char** argv);

}  // namespace nn::repl
