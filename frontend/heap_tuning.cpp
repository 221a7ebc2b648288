// keep_freed_memory (frontend/heap_tuning.h).
#include "frontend/heap_tuning.h"

// Any C library header defines __GLIBC__ where the C library is glibc;
// tested before one, it was never defined and the settings never made.
#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace nn::frontend {

void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);   // larger blocks still come from mmap (32 MiB is glibc's most)
  mallopt(M_TRIM_THRESHOLD, 256 << 20);  // the heap's free top is kept up to this
#endif
}

}  // namespace nn::frontend
