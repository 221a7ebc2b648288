// SourceLoc: where in a script an op was called, as byte offsets into one of
// the frontend's source files. The backend never reads it; it keeps the
// location of the op being called (set by the frontend before each call) so
// that the autodiff tape and in-place writes can be reported at the user's
// line (SPEC §17), and the IR's nodes carry it for diagnostics.
#pragma once
#include <cstdint>

namespace nn::backend {

struct SourceLoc {
  uint32_t file = 0, begin = 0, end = 0;  // file 0: no source
  bool valid() const { return file != 0; }
};

namespace detail {
inline thread_local SourceLoc t_op_loc;
inline thread_local SourceLoc t_library_entry;
}  // namespace detail
// The location of the op call now running on this thread.
inline const SourceLoc& op_loc() { return detail::t_op_loc; }
inline void set_op_loc(const SourceLoc& l) { detail::t_op_loc = l; }
// While stdlib code runs for a script (an optimizer's step inside
// `minimize`), the script's call into it; invalid while the script's own
// code runs. Set and restored by the frontend around calls.
inline const SourceLoc& library_entry() { return detail::t_library_entry; }
inline void set_library_entry(const SourceLoc& l) { detail::t_library_entry = l; }
// The script's line for what runs now: the op call itself, or the call
// into the stdlib that it is part of. What diagnostics about the autodiff
// tape point at (SPEC §17).
inline const SourceLoc& script_loc() { return library_entry().valid() ? library_entry() : op_loc(); }

}  // namespace nn::backend
