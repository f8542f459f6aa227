#include "model/model_parameters.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <cmath>
#include <map>
#include <sstream>
#include <vector>

#include "runtime/error.h"

namespace dcuda::model {

namespace {

using runtime::error;

constexpr int format_version = 1;

std::size_t index_of(dcuda_model_path path, dcuda_model_initiator initiator) {
  return static_cast<std::size_t>(path) * 2 + static_cast<std::size_t>(initiator);
}

// The text after "key=" among `words`, for messages.
std::string words_value(const std::vector<std::string>& words, const std::string& key) {
  for (const std::string& word : words) {
    if (word.rfind(key + "=", 0) == 0) return word.substr(key.size() + 1);
  }
  return {};
}

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream stream(line);
  std::vector<std::string> words;
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

class line_reader {
 public:
  line_reader(const std::string& source, int line) : where_(source + ":" + std::to_string(line)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT, where_ + ": " + what);
  }

  dcuda_model_path path(const std::string& word) const {
    for (auto path : {DCUDA_MODEL_SAME_GPU, DCUDA_MODEL_PEER, DCUDA_MODEL_NETWORK}) {
      if (word == path_name(path)) return path;
    }
    fail("unknown path '" + word + "' (same-gpu, peer or network)");
  }

  dcuda_model_initiator initiator(const std::string& word) const {
    for (auto initiator : {DCUDA_MODEL_DEVICE, DCUDA_MODEL_HOST}) {
      if (word == initiator_name(initiator)) return initiator;
    }
    fail("unknown initiator '" + word + "' (device or host)");
  }

  // key=value words after the first three, each of `keys` exactly once, nothing else.
  std::map<std::string, double> values(const std::vector<std::string>& words,
                                       const std::vector<std::string>& keys) const {
    std::map<std::string, double> found;
    for (std::size_t i = 3; i < words.size(); ++i) {
      const std::string& word = words[i];
      const std::size_t equals = word.find('=');
      const std::string key = word.substr(0, equals);
      if (equals == std::string::npos || std::find(keys.begin(), keys.end(), key) == keys.end()) {
        fail("unexpected '" + word + "' (expected " + joined(keys) + ")");
      }
      if (found.count(key) != 0) fail(key + " given twice");
      const char* first = word.data() + equals + 1;
      const char* last = word.data() + word.size();
      double value = 0;
      const auto [end, status] = std::from_chars(first, last, value);
      if (status != std::errc() || end != last || first == last || !std::isfinite(value)) {
        fail(key + " is not a finite number ('" + word.substr(equals + 1) + "')");
      }
      found[key] = value;
    }
    for (const std::string& key : keys) {
      if (found.count(key) == 0) fail(key + " is missing");
    }
    return found;
  }

  // A value that counts bytes: a whole number, at least 0.
  std::size_t whole_bytes(const std::map<std::string, double>& values,
                          const std::vector<std::string>& words, const std::string& key) const {
    const double value = values.at(key);
    if (value < 0 || value != std::floor(value) || value > 1e18) {
      fail(key + " is not a whole number of bytes (" + words_value(words, key) + ")");
    }
    return static_cast<std::size_t>(value);
  }

  void not_negative(const std::map<std::string, double>& values,
                    const std::vector<std::string>& keys) const {
    for (const std::string& key : keys) {
      if (values.at(key) < 0) fail(key + " is negative (" + std::to_string(values.at(key)) + ")");
    }
  }

 private:
  static std::string joined(const std::vector<std::string>& keys) {
    std::string text;
    for (const std::string& key : keys) text += (text.empty() ? "" : ", ") + key + "=";
    return text;
  }

  std::string where_;
};

}  // namespace

path_fit& parameters::at(dcuda_model_path path, dcuda_model_initiator initiator) {
  return fits_.at(index_of(path, initiator));
}

const path_fit& parameters::at(dcuda_model_path path, dcuda_model_initiator initiator) const {
  return fits_.at(index_of(path, initiator));
}

const char* path_name(dcuda_model_path path) {
  switch (path) {
    case DCUDA_MODEL_SAME_GPU:
      return "same-gpu";
    case DCUDA_MODEL_PEER:
      return "peer";
    case DCUDA_MODEL_NETWORK:
      return "network";
  }
  return "unknown";
}

const char* initiator_name(dcuda_model_initiator initiator) {
  switch (initiator) {
    case DCUDA_MODEL_DEVICE:
      return "device";
    case DCUDA_MODEL_HOST:
      return "host";
  }
  return "unknown";
}

parameters parse_model(std::string_view text, const std::string& source) {
  parameters model;
  bool versioned = false;
  std::istringstream lines{std::string(text)};
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const line_reader reader(source, number);
    const std::vector<std::string> words = words_of(line);
    if (words.empty() || words[0][0] == '#') continue;
    if (!versioned) {
      if (words.size() != 2 || words[0] != "dcuda-model" ||
          words[1] != std::to_string(format_version)) {
        reader.fail("the first line is not 'dcuda-model " + std::to_string(format_version) +
                    "' (not a model file dcuda-model wrote, or another version)");
      }
      versioned = true;
      continue;
    }
    if (words.size() < 3) {
      reader.fail("expected 'single|pipelined|concurrent PATH INITIATOR key=value...'");
    }
    path_fit& fit = model.at(reader.path(words[1]), reader.initiator(words[2]));
    const std::string place = words[1] + " " + words[2];
    if (words[0] == "single") {
      const std::vector<std::string> keys = {"from_bytes", "L_us",          "o_us",
                                             "S_us",       "O_ns_per_byte", "G_ns_per_byte"};
      const auto values = reader.values(words, keys);
      reader.not_negative(values, {"from_bytes", "L_us", "S_us", "G_ns_per_byte"});
      const std::size_t from_bytes = reader.whole_bytes(values, words, "from_bytes");
      if (fit.single.empty() ? from_bytes != 0 : from_bytes <= fit.single.back().from_bytes) {
        reader.fail("from_bytes=" + std::to_string(from_bytes) + " of " + place +
                    (fit.single.empty() ? " is not 0 (the first piece starts at 0 bytes)"
                                        : " does not follow the previous piece's " +
                                              std::to_string(fit.single.back().from_bytes)));
      }
      fit.single.push_back(single_message_fit{from_bytes, values.at("L_us"), values.at("o_us"),
                                              values.at("S_us"), values.at("O_ns_per_byte"),
                                              values.at("G_ns_per_byte")});
    } else if (words[0] == "pipelined") {
      const std::vector<std::string> keys = {"g_us", "A_ns_per_byte", "B", "largest_bytes",
                                             "G_ns_per_byte"};
      const auto values = reader.values(words, keys);
      reader.not_negative(values, {"g_us", "A_ns_per_byte", "G_ns_per_byte"});
      if (fit.pipelined) reader.fail("a second pipelined fit of " + place);
      fit.pipelined = pipelined_fit{values.at("g_us"), values.at("A_ns_per_byte"), values.at("B"),
                                    reader.whole_bytes(values, words, "largest_bytes"),
                                    values.at("G_ns_per_byte")};
    } else if (words[0] == "concurrent") {
      const std::vector<std::string> keys = {"streams", "g_us", "G_ns_per_byte", "wait_us"};
      const auto values = reader.values(words, keys);
      reader.not_negative(values, {"g_us", "G_ns_per_byte", "wait_us"});
      const double streams = values.at("streams");
      if (streams < 1 || streams != std::floor(streams) || streams > 1e6) {
        reader.fail("streams is not a whole number of at least 1 (" +
                    words_value(words, "streams") + ")");
      }
      if (!fit.concurrent.empty() && streams <= fit.concurrent.back().streams) {
        reader.fail("streams=" + words_value(words, "streams") + " of " + place +
                    " does not follow the previous concurrent fit's " +
                    std::to_string(fit.concurrent.back().streams));
      }
      fit.concurrent.push_back(concurrent_fit{static_cast<int>(streams), values.at("g_us"),
                                              values.at("G_ns_per_byte"), values.at("wait_us")});
    } else {
      reader.fail("unknown line kind '" + words[0] + "' (single, pipelined or concurrent)");
    }
  }
  if (!versioned) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                source + ": empty (no 'dcuda-model " + std::to_string(format_version) + "' line)");
  }
  return model;
}

double predict(const parameters& model, dcuda_model_path path, dcuda_model_initiator initiator,
               std::size_t bytes, int count) {
  const path_fit& fit = model.at(path, initiator);
  const std::string place = std::string(path_name(path)) + " " + initiator_name(initiator);
  if (fit.single.empty()) {
    throw error(DCUDA_ERROR_INVALID_STATE, "the model has no single-message fit of " + place +
                                               " (its results held no such benchmark table)");
  }
  const single_message_fit* piece = &fit.single.front();
  for (const single_message_fit& candidate : fit.single) {
    if (bytes >= candidate.from_bytes) piece = &candidate;
  }
  const double m = static_cast<double>(bytes);
  const single_message_fit& one = *piece;
  const double first = one.latency_us + one.overhead_us + one.consistency_us +
                       (one.overhead_ns_per_byte + one.gap_ns_per_byte) * 1e-3 * m;
  if (count == 1) return first;
  if (!fit.pipelined) {
    throw error(DCUDA_ERROR_INVALID_STATE,
                "the model has no pipelined fit of " + place + ", which a count above 1 needs");
  }
  const pipelined_fit& each = *fit.pipelined;
  // m^B is undefined at m = 0 for B < 0: a message without payload costs the gap g. Beyond the
  // largest measured size the per-byte overhead stays what it was there.
  const double measured = std::max(1.0, std::min(m, static_cast<double>(each.largest_bytes)));
  const double per_byte =
      m > 0 ? each.gap_ns_per_byte +
                  each.overhead_ns_per_byte * std::pow(measured, each.overhead_exponent)
            : 0.0;
  const double further = std::max(each.gap_us, m * per_byte * 1e-3);
  return first + static_cast<double>(count - 1) * further;
}

namespace {

// The concurrent fit of `streams`: interpolated in log(streams) between the fits around it, the
// nearest beyond the counts measured. `fits` is not empty.
concurrent_fit concurrent_at(const std::vector<concurrent_fit>& fits, int streams) {
  const auto above = std::find_if(fits.begin(), fits.end(),
                                  [&](const concurrent_fit& c) { return c.streams >= streams; });
  const concurrent_fit& high = above == fits.end() ? fits.back() : *above;
  const concurrent_fit& low =
      above == fits.begin() || above == fits.end() ? high : *std::prev(above);
  const double weight = high.streams == low.streams
                            ? 0.0
                            : std::log(static_cast<double>(streams) / low.streams) /
                                  std::log(static_cast<double>(high.streams) / low.streams);
  const auto between = [&](double a, double b) { return a + weight * (b - a); };
  return concurrent_fit{streams, between(low.gap_us, high.gap_us),
                        between(low.gap_ns_per_byte, high.gap_ns_per_byte),
                        between(low.wait_us, high.wait_us)};
}

[[noreturn]] void no_concurrent_fit(dcuda_model_path path, dcuda_model_initiator initiator,
                                    int streams) {
  throw error(DCUDA_ERROR_INVALID_STATE,
              std::string("the model has no concurrent fit of ") + path_name(path) + " " +
                  initiator_name(initiator) + ", which " + std::to_string(streams) +
                  " stream(s) need (its results held no host_stream_concurrency tables)");
}

}  // namespace

void check_streams(dcuda_model_initiator initiator, int streams) {
  if (streams < 1) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT, "streams " + std::to_string(streams) + " is below 1");
  }
  if (initiator == DCUDA_MODEL_DEVICE && streams > 1) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                "streams " + std::to_string(streams) +
                    " with the initiator DCUDA_MODEL_DEVICE: a rank issues its puts inside the "
                    "kernel, not from streams (predict them with dcuda_model_predict, or pass "
                    "streams 1)");
  }
}

double predict_streams(const parameters& model, dcuda_model_path path,
                       dcuda_model_initiator initiator, std::size_t bytes, int count, int streams) {
  check_streams(initiator, streams);
  const path_fit& fit = model.at(path, initiator);
  if (fit.concurrent.empty()) {
    if (streams == 1) return predict(model, path, initiator, bytes, count);
    no_concurrent_fit(path, initiator, streams);
  }
  const double first = predict(model, path, initiator, bytes, 1);
  const concurrent_fit at = concurrent_at(fit.concurrent, streams);
  const double further = at.gap_us + static_cast<double>(bytes) * at.gap_ns_per_byte * 1e-3;
  return first + static_cast<double>(count - 1) * further;
}

double predict_stream_waits(const parameters& model, dcuda_model_path path, int count,
                            int streams) {
  check_streams(DCUDA_MODEL_HOST, streams);
  const path_fit& fit = model.at(path, DCUDA_MODEL_HOST);
  if (fit.concurrent.empty()) no_concurrent_fit(path, DCUDA_MODEL_HOST, streams);
  return static_cast<double>(count) * concurrent_at(fit.concurrent, streams).wait_us;
}

namespace {

// The predicted time of a put of `message` bytes over the network path cut into pieces of `chunk`
// bytes, as the delivery agent cuts it (network_proxy.cpp: each piece is the chunk or what
// remains, whichever is less): the first piece a single message, each further one its pipelined
// time. A message no larger than the chunk is one piece of its own size, T(m), not a whole chunk
// T(c). The last piece of a longer message is likewise only what remains, and the pipeline passes
// it in the time of its own size, t(m - (pieces - 1) c), so it is priced at that size too: a whole
// chunk's t(c) would charge a chunk that does not divide the message for bytes it never sends. (The
// sizes best_network_chunk scores are powers of two, so there the last piece is a whole chunk.)
double chunked_time(const parameters& model, std::size_t message, std::size_t chunk) {
  const auto single = [&](std::size_t bytes) {
    return predict(model, DCUDA_MODEL_NETWORK, DCUDA_MODEL_DEVICE, bytes, 1);
  };
  const auto further = [&](std::size_t bytes) {
    return predict(model, DCUDA_MODEL_NETWORK, DCUDA_MODEL_DEVICE, bytes, 2) - single(bytes);
  };
  if (message <= chunk) return single(message);
  const std::size_t pieces = (message + chunk - 1) / chunk;
  const std::size_t last = message - (pieces - 1) * chunk;
  return single(chunk) + static_cast<double>(pieces - 2) * further(chunk) + further(last);
}

}  // namespace

std::optional<std::size_t> best_network_chunk(const parameters& model, std::size_t lowest,
                                              std::size_t highest) {
  const path_fit& fit = model.at(DCUDA_MODEL_NETWORK, DCUDA_MODEL_DEVICE);
  if (fit.single.empty() || !fit.pipelined) return std::nullopt;
  std::optional<std::size_t> best;
  double least = 0;
  for (std::size_t chunk = lowest; chunk <= highest && chunk != 0; chunk *= 2) {
    double per_byte = 0;
    for (const std::size_t message : {std::size_t{1} << 20, std::size_t{4} << 20,
                                      std::size_t{16} << 20, std::size_t{64} << 20}) {
      per_byte += chunked_time(model, message, chunk) / static_cast<double>(message);
    }
    if (!best || per_byte < least) {
      best = chunk;
      least = per_byte;
    }
  }
  return best;
}

}  // namespace dcuda::model
