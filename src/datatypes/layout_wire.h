// A committed type's layout as it crosses to another process: a typed put to a process on another
// node names the target's datatype, whose handle means nothing there, so the sender sends the
// type's runs and bounds and the receiver builds the layout from them.
//
// Format (little endian, fixed-width fields): a 32-byte head {u32 magic, u32 version, i64
// run_count, i64 lb, i64 extent}, then run_count records {i64 displacement, i64 length}, in the
// type map's order. The receiver takes up to max_runs runs, every displacement, length and bound
// within 2^60 in magnitude (runs that continue each other merged, and within it too), a size
// within 2^62, and for runs not all of one length at one stride (a listed layout, with a run
// index) a size within max_runs * protocol::run_index_bytes = 2^36: a type past these limits
// works in its own process but cannot be sent.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "datatypes/flat_type.h"

namespace dcuda::datatypes {

// A committed type's runs as they travel to another process: the receiver rebuilds the layout
// itself (build_layout) from what it decoded and checked, so nothing it reads was computed by the
// sender.
// Bytes of the encoding of a type of `runs` runs.
std::size_t encoded_layout_bytes(std::size_t runs);
std::vector<char> encode_layout(const flat_type& type);
// The flat type `bytes` encode; nullopt with `problem` set (a sentence naming the bad field and
// its value) when they are not a valid encoding.
std::optional<flat_type> decode_layout(std::span<const std::byte> bytes, std::string& problem);

}  // namespace dcuda::datatypes
