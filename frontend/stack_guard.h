// How much of this thread's C++ stack is in use, so that recursion the user
// controls (nested calls, values nested in values, deeply nested source)
// ends in a diagnostic before the stack runs out, whatever stack size the
// thread was given (the CLI runs on a large one; an embedding host's thread
// may have a small one).
#pragma once
#include <cstddef>

namespace nn::frontend {

// True when this thread has used its stack beyond a safe limit: all of it
// but a margin for the frames that report the error (and sanitizers'
// redzones).
bool stack_nearly_full();

// Thrown by the parser and the syntax tree's builder when the stack is
// nearly full (code nested deeply on a thread with a small stack, or code
// that a host function evaluates for the code it runs, again and again);
// parsing reports it as a diagnostic.
struct StackExhausted {};

}  // namespace nn::frontend
