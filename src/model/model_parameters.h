// The fitted parameters of dcuda's performance model, read from the text file dcuda-model writes
// (docs/model.md "The model file"), and the prediction made from them. Host only; the C API on
// top is model_api.cpp.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dcuda/model.h"

namespace dcuda::model {

// T(m) = L + o + S + (O + G) m, in microseconds, for messages of at least `from_bytes` (up to
// the next piece's): dcuda's protocol changes with the size, so o and O do too.
struct single_message_fit {
  std::size_t from_bytes = 0;
  double latency_us = 0;            // L: the path's hardware floor, one way
  double overhead_us = 0;           // o: the initiator's cost per message
  double consistency_us = 0;        // S: the memory-consistency operation
  double overhead_ns_per_byte = 0;  // O
  double gap_ns_per_byte = 0;       // G: 1 / the path's peak bandwidth
};

// t(m) = max(g, m (G + A min(m, M)^B)), in microseconds per message: the per-byte overhead
// falls with the size as far as it was measured (M) and no further.
struct pipelined_fit {
  double gap_us = 0;                // g
  double overhead_ns_per_byte = 0;  // A
  double overhead_exponent = 0;     // B
  std::size_t largest_bytes = 0;    // M
  double gap_ns_per_byte = 0;       // G
};

// Puts queued on `streams` streams at once: the GPU plays them at an aggregate time per message
// t(m) = g + m G (LogGP's form: it starts the next put and copies this one's bytes in turn), g
// and G measured with that many streams, not derived from one stream's figures (G is the
// bandwidth many copies get when they share the GPU's memory or its link); and it passes their
// stream waits at `wait_us` each.
struct concurrent_fit {
  int streams = 1;
  double gap_us = 0;           // g
  double gap_ns_per_byte = 0;  // G
  double wait_us = 0;          // w
};

struct path_fit {
  std::vector<single_message_fit> single;  // by from_bytes, the first from 0; empty: no fit
  std::optional<pipelined_fit> pipelined;
  std::vector<concurrent_fit> concurrent;  // by streams, ascending; empty: no fit
};

class parameters {
 public:
  path_fit& at(dcuda_model_path path, dcuda_model_initiator initiator);
  const path_fit& at(dcuda_model_path path, dcuda_model_initiator initiator) const;

 private:
  std::array<path_fit, 6> fits_{};
};

// The words of the model file: "same-gpu", "peer", "network"; "device", "host".
const char* path_name(dcuda_model_path path);
const char* initiator_name(dcuda_model_initiator initiator);

// Parses a model file's text; `source` names it in errors ("<source>:<line>: ..."), which are
// runtime::error with DCUDA_ERROR_INVALID_ARGUMENT. Every value must be a finite number; L, S,
// G, g, A not negative; from_bytes and largest_bytes whole numbers; the single-message pieces of a
// path and initiator in ascending from_bytes, the first from 0; one pipelined fit each; the
// concurrent fits in ascending streams, each at least 1; unknown words are refused.
parameters parse_model(std::string_view text, const std::string& source);

// The predicted time in microseconds (dcuda/model.h); runtime::error with
// DCUDA_ERROR_INVALID_STATE where the fit it needs is not in `model`.
double predict(const parameters& model, dcuda_model_path path, dcuda_model_initiator initiator,
               std::size_t bytes, int count);

// Refuses a count of streams no model predicts, before a model is needed: fewer than 1, or more
// than 1 for the device initiator, whose puts a rank issues inside the kernel, not from streams.
// runtime::error with DCUDA_ERROR_INVALID_ARGUMENT; the one place these refusals are worded
// (predict_streams, predict_stream_waits and the calls of dcuda/model.h check with it).
void check_streams(dcuda_model_initiator initiator, int streams);

// The same for `count` puts spread over `streams` streams queued at once
// (dcuda_model_predict_streams): T(m) + (count - 1) (g + m G), g and G interpolated in
// log(streams) between the concurrent fits around `streams` (the nearest beyond the measured
// counts); without concurrent fits, one stream is predict's pipelined time and more an error.
// `streams` as check_streams takes it.
double predict_streams(const parameters& model, dcuda_model_path path,
                       dcuda_model_initiator initiator, std::size_t bytes, int count, int streams);

// The pipeline stage of the network path (DCUDA_NETWORK_CHUNK=model) the model predicts moves
// large messages fastest: of the powers of two from `lowest` to `highest`, the one whose sum over
// messages of 1, 4, 16 and 64 MiB of the predicted time per byte is least, where a message of m
// bytes travels as ceil(m / c) pieces of c bytes, the last only what remains: a message no larger
// than c is a single message of m bytes, T(m); a larger one T(c) for the first piece and the
// pipelined time t of each further piece's size (the device initiator's network fits: what a
// rank's put there costs). Empty where the model has no single-message and pipelined network fit.
std::optional<std::size_t> best_network_chunk(const parameters& model, std::size_t lowest,
                                              std::size_t highest);

// The time the GPU spends passing `count` host stream waits whose notifications have arrived,
// from `streams` streams (dcuda_model_predict_stream_waits): count w, w interpolated as
// predict_streams's g; an error without concurrent fits of `path`'s host initiator, and
// `streams` as check_streams takes it.
double predict_stream_waits(const parameters& model, dcuda_model_path path, int count, int streams);

}  // namespace dcuda::model
