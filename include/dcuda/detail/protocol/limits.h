// Sizes fixed by the model or by our protocol layout.
#pragma once

#include <cstdint>

namespace dcuda::protocol {

inline constexpr int tag_count = 256;     // tags are 8 bit (thesis 3.3.3)
inline constexpr int max_windows = 32;    // window slots per rank; one bit each in a 32-bit mask
inline constexpr int max_log_line = 240;  // characters of one dcuda_log line; longer is cut
// A put to a rank reached through the network up to this size travels inside the command channel
// (the rank's threads write it there): the proxy needs no copy from the device, and the rank may
// reuse its buffer at once. Larger ones are copied out by the proxy (dcuda_win_flush waits).
inline constexpr int inline_put_limit = 1024;

}  // namespace dcuda::protocol
