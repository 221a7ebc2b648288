// keep_freed_memory (frontend/heap_tuning.h): after it, a 16 MB block comes
// from the heap, which keeps it when freed, not from its own mapping, which
// glibc unmaps on free (the next trace then faulted it in again, page by
// page). mallinfo2's hblks counts the blocks that have their own mapping.
#include <doctest/doctest.h>

#include <cstdlib>

#include "frontend/heap_tuning.h"

#if defined(__GLIBC__)
#include <malloc.h>

TEST_CASE("keep_freed_memory: a 16 MB block comes from the heap, not a mapping of its own") {
  nn::frontend::keep_freed_memory();
  const size_t mapped_before = mallinfo2().hblks;
  void* block = std::malloc(16 << 20);
  REQUIRE(block);
  CHECK(mallinfo2().hblks == mapped_before);
  std::free(block);
}
#endif
