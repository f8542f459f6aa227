// Helpers that steer the compiler's code generation on the fast paths; they emit no instruction
// of their own.
#pragma once

namespace dcuda::device {

// A read of a dcuda_state field by thread 0 outside the barriers that order thread 0's writes for
// the other threads (before a call's entry barrier). Volatile, so that the compiler cannot turn it
// into a speculative read that every thread of the warp performs: the other threads may read the
// field only after the barrier, and racecheck would rightly report them.
template <typename T>
__device__ inline T owner_read(const T& field) {
  return *const_cast<const volatile T*>(&field);
}

// Makes the caller's arguments opaque to the compiler (an empty asm that "changes" them; no
// instruction): what a dcuda call derives from its arguments is then computed in the call, not
// once before a loop that calls it with the same arguments, where it would stay live across the
// whole loop and spill to local memory, whose loads then sit on the latency path
// (docs/notes/performance-history.md, "Peer latency").
// One asm for all of a call's arguments (separate ones would order the values among themselves).
__device__ inline void opaque_arguments(int& a, int& b) {
  asm volatile("" : "+r"(a), "+r"(b));
}
__device__ inline void opaque_arguments(int& a, int& b, int& c, int& d) {
  asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
}
__device__ inline void opaque_arguments(int& a, int& b, int& c, int& d, int& e) {
  asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e));
}

}  // namespace dcuda::device
