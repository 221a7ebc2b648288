// What the ranks of a run print (SPEC §14): with several ranks, each line
// rank k > 0 writes to stdout starts with "[k] ", and each line any rank
// writes to stderr (its diagnostics) starts with its rank, so that the
// interleaved output of mpiexec says who said what.
#pragma once
#include "backend/comm/communicator.h"

namespace nn::repl {

// Puts the prefixes on std::cout and std::cerr for the rest of the process.
void prefix_rank_output(const backend::comm::World& w);

// Called before a rank prints its diagnostic: it starts MPI where it has
// not started, and rank k > 0 waits k quarter seconds (2 s at most). When
// every rank fails alike (a name the script lacks), rank 0's diagnostic
// ends the run meanwhile, so the message is printed once; a failure of
// rank k's own is printed by it.
void before_rank_diagnostic();

}  // namespace nn::repl
