// keep_freed_memory: a process-wide allocator setting for programs that
// trace large graphs (the nn command, the benches). A trace and its compile
// allocate and free tens of MB of graph (nodes, values, their copies);
// glibc hands large blocks back to the system on free and the next trace
// faults them in again, page by page, which cost as much as the passes.
// The library never calls it: an embedding host owns its allocator.
#pragma once

namespace nn::frontend {

void keep_freed_memory();

}  // namespace nn::frontend
