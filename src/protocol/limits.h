// Sizes fixed by the model or by our protocol layout.
#pragma once

#include <cstdint>

namespace dcuda::protocol {

inline constexpr int tag_count = 256;     // tags are 8 bit (thesis 3.3.3)
inline constexpr int max_windows = 32;    // window slots per rank; one bit each in a 32-bit mask
inline constexpr int max_log_line = 240;  // characters of one dcuda_log line; longer is cut

}  // namespace dcuda::protocol
