// The performance model's file and prediction (model/model_parameters.h): values read back,
// predictions against the formulas worked by hand, and every malformed file refused with its line.
#include <cmath>
#include <string>

#include "model/model_parameters.h"
#include "runtime/error.h"
#include "error_text.h"
#include "test_main.h"

namespace {

using dcuda::model::parse_model;
using dcuda::model::predict;
using dcuda_test::contains;
using dcuda_test::error_of;

const char* const two_fits =
    "# a comment, then the version\n"
    "dcuda-model 1\n"
    "\n"
    "single peer device from_bytes=0 L_us=2 o_us=0.5 S_us=0.25 O_ns_per_byte=0.01 "
    "G_ns_per_byte=0.0025\n"
    "single peer device from_bytes=16 L_us=2 o_us=1.5 S_us=0.25 O_ns_per_byte=0.001 "
    "G_ns_per_byte=0.0025\n"
    "pipelined peer device g_us=2.5 A_ns_per_byte=1000 B=-1 largest_bytes=4194304 "
    "G_ns_per_byte=0.0025\n"
    "single same-gpu host from_bytes=0 L_us=1 o_us=-0.2 S_us=0 O_ns_per_byte=0 G_ns_per_byte=1\n";

bool near(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::fmax(1.0, std::fabs(b));
}

// The refusal of `text` (a model file after its version line).
std::string refusal_of(const std::string& body) {
  dcuda_error_code code{};
  const std::string text =
      error_of([&] { parse_model("dcuda-model 1\n" + body, "model.txt"); }, &code);
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_ARGUMENT);
  return text;
}

}  // namespace

DCUDA_TEST(model_file_values_are_read_into_their_path_and_initiator) {
  const auto model = parse_model(two_fits, "model.txt");
  const auto& peer = model.at(DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE);
  DCUDA_CHECK_EQ(peer.single.size(), std::size_t{2});
  DCUDA_CHECK_EQ(peer.single[1].from_bytes, std::size_t{16});
  DCUDA_CHECK(near(peer.single[0].latency_us, 2));
  DCUDA_CHECK(near(peer.single[0].overhead_us, 0.5));
  DCUDA_CHECK(near(peer.single[1].overhead_us, 1.5));
  DCUDA_CHECK(near(peer.single[0].consistency_us, 0.25));
  DCUDA_CHECK(near(peer.single[0].overhead_ns_per_byte, 0.01));
  DCUDA_CHECK(near(peer.single[1].overhead_ns_per_byte, 0.001));
  DCUDA_CHECK(peer.pipelined.has_value());
  DCUDA_CHECK(near(peer.pipelined->gap_us, 2.5));
  DCUDA_CHECK(near(peer.pipelined->overhead_exponent, -1));
  const auto& host = model.at(DCUDA_MODEL_SAME_GPU, DCUDA_MODEL_HOST);
  DCUDA_CHECK(host.single.size() == 1 && !host.pipelined.has_value());
  DCUDA_CHECK(near(host.single[0].overhead_us, -0.2));
  DCUDA_CHECK(model.at(DCUDA_MODEL_NETWORK, DCUDA_MODEL_DEVICE).single.empty());
  DCUDA_CHECK(model.at(DCUDA_MODEL_SAME_GPU, DCUDA_MODEL_DEVICE).single.empty());
}

DCUDA_TEST(model_predictions_follow_the_single_and_pipelined_formulas) {
  const auto model = parse_model(two_fits, "model.txt");
  // One message: L + o + S + (O + G) m; below 16 B 2 + 0.5 + 0.25 + 0.0125e-3 m, from 16 B
  // 2 + 1.5 + 0.25 + 0.0035e-3 m.
  DCUDA_CHECK(near(predict(model, DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 0, 1), 2.75));
  DCUDA_CHECK(
      near(predict(model, DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 15, 1), 2.75 + 0.0125e-3 * 15));
  DCUDA_CHECK(
      near(predict(model, DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 16, 1), 3.75 + 0.0035e-3 * 16));
  const double first_mib = 3.75 + 0.0035e-3 * (1 << 20);
  DCUDA_CHECK(near(predict(model, DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 1 << 20, 1), first_mib));
  // Further messages: max(g, m (G + A m^B)); with B = -1, m (G + A/m) = G m + A (ns).
  // 8 B: 0.02 + 1000 ns = 1.00002 us < g = 2.5 us, so g.
  DCUDA_CHECK(near(predict(model, DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 8, 10),
                   2.75 + 0.0125e-3 * 8 + 9 * 2.5));
  // 4 MiB: 0.0025 * 4194304 + 1000 ns = 11.48576 us > g.
  const double m = 4194304;
  DCUDA_CHECK(near(predict(model, DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 4194304, 3),
                   3.75 + 0.0035e-3 * m + 2 * (0.0025 * m + 1000) * 1e-3));
  // Beyond the largest measured size (4 MiB) the per-byte overhead stays A M^B = 1000 / M:
  // 16 MiB costs 0.0025 * 16 MiB + 16 MiB * 1000 / 4 MiB ns, not 0.0025 * 16 MiB + 1000 ns.
  const double big = 16.0 * 1048576;
  DCUDA_CHECK(near(predict(model, DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 16 << 20, 2),
                   3.75 + 0.0035e-3 * big + (0.0025 * big + big * 1000 / m) * 1e-3));
  // No payload: the gap.
  DCUDA_CHECK(near(predict(model, DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 0, 2), 2.75 + 2.5));
  DCUDA_CHECK(near(predict(model, DCUDA_MODEL_SAME_GPU, DCUDA_MODEL_HOST, 1000, 1), 1.8));
}

DCUDA_TEST(model_predictions_without_their_fit_say_which_is_missing) {
  const auto model = parse_model(two_fits, "model.txt");
  dcuda_error_code code{};
  const std::string none =
      error_of([&] { predict(model, DCUDA_MODEL_NETWORK, DCUDA_MODEL_HOST, 8, 1); }, &code);
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_STATE);
  DCUDA_CHECK(contains(none, "no single-message fit of network host"));
  const std::string pipelined =
      error_of([&] { predict(model, DCUDA_MODEL_SAME_GPU, DCUDA_MODEL_HOST, 8, 2); }, &code);
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_STATE);
  DCUDA_CHECK(contains(pipelined, "no pipelined fit of same-gpu host"));
  DCUDA_CHECK(
      error_of([&] { predict(model, DCUDA_MODEL_SAME_GPU, DCUDA_MODEL_HOST, 8, 1); }).empty());
}

DCUDA_TEST(malformed_model_files_are_refused_with_their_line) {
  DCUDA_CHECK(contains(error_of([] { parse_model("", "empty.txt"); }), "empty.txt: empty"));
  DCUDA_CHECK(contains(error_of([] { parse_model("dcuda-model 2\n", "new.txt"); }),
                       "new.txt:1: the first line is not 'dcuda-model 1'"));
  DCUDA_CHECK(contains(error_of([] { parse_model("single peer device L_us=1\n", "old.txt"); }),
                       "old.txt:1: the first line is not"));
  const std::string good = "from_bytes=0 L_us=1 o_us=1 S_us=0 O_ns_per_byte=0 G_ns_per_byte=0";
  DCUDA_CHECK(contains(refusal_of("single moon device " + good + "\n"),
                       "model.txt:2: unknown path 'moon'"));
  DCUDA_CHECK(contains(refusal_of("single peer user " + good + "\n"),
                       "model.txt:2: unknown initiator 'user'"));
  DCUDA_CHECK(contains(refusal_of("double peer host " + good + "\n"),
                       "model.txt:2: unknown line kind 'double'"));
  DCUDA_CHECK(
      contains(refusal_of("single peer host from_bytes=0 L_us=1 o_us=1 S_us=0 O_ns_per_byte=0\n"),
               "model.txt:2: G_ns_per_byte is missing"));
  DCUDA_CHECK(contains(refusal_of("single peer host " + good + " L_us=2\n"), "L_us given twice"));
  DCUDA_CHECK(contains(refusal_of("single peer host " + good + " X=2\n"), "unexpected 'X=2'"));
  DCUDA_CHECK(contains(
      refusal_of(
          "single peer host from_bytes=0 L_us=nan o_us=1 S_us=0 O_ns_per_byte=0 G_ns_per_byte=0\n"),
      "L_us is not a finite number ('nan')"));
  DCUDA_CHECK(contains(
      refusal_of(
          "single peer host from_bytes=0 L_us=1us o_us=1 S_us=0 O_ns_per_byte=0 G_ns_per_byte=0\n"),
      "L_us is not a finite number ('1us')"));
  DCUDA_CHECK(contains(
      refusal_of(
          "single peer host from_bytes=0 L_us=-1 o_us=1 S_us=0 O_ns_per_byte=0 G_ns_per_byte=0\n"),
      "L_us is negative"));
  DCUDA_CHECK(contains(refusal_of("pipelined peer host g_us=1 A_ns_per_byte=-2 B=0 "
                                  "largest_bytes=8 G_ns_per_byte=0\n"),
                       "A_ns_per_byte is negative"));
  const std::string later = "L_us=1 o_us=1 S_us=0 O_ns_per_byte=0 G_ns_per_byte=0";
  DCUDA_CHECK(contains(refusal_of("single peer host from_bytes=8 " + later + "\n"),
                       "model.txt:2: from_bytes=8 of peer host is not 0"));
  DCUDA_CHECK(contains(
      refusal_of("single peer host " + good + "\n\nsingle peer host from_bytes=0 " + later + "\n"),
      "model.txt:4: from_bytes=0 of peer host does not follow the previous "
      "piece's 0"));
  DCUDA_CHECK(contains(refusal_of("single peer host from_bytes=1.5 " + later + "\n"),
                       "from_bytes is not a whole number of bytes (1.5)"));
  const std::string rate = "g_us=1 A_ns_per_byte=0 B=0 largest_bytes=8 G_ns_per_byte=0";
  DCUDA_CHECK(contains(refusal_of("pipelined peer host g_us=1 A_ns_per_byte=0 B=0 "
                                  "largest_bytes=-8 G_ns_per_byte=0\n"),
                       "largest_bytes is not a whole number of bytes (-8)"));
  DCUDA_CHECK(
      contains(refusal_of("pipelined peer host " + rate + "\npipelined peer host " + rate + "\n"),
               "model.txt:3: a second pipelined fit of peer host"));
  DCUDA_CHECK(contains(refusal_of("peer host\n"), "model.txt:2: expected 'single|pipelined"));
}

namespace {

// Concurrent fits of the peer path's host puts from 4 and 16 streams, and the single-message fit
// they start from.
const char* const concurrent_fits =
    "dcuda-model 1\n"
    "single peer host from_bytes=0 L_us=2 o_us=5 S_us=1 O_ns_per_byte=0 G_ns_per_byte=0\n"
    "concurrent peer host streams=4 g_us=3 G_ns_per_byte=2 wait_us=1\n"
    "concurrent peer host streams=16 g_us=1 G_ns_per_byte=4 wait_us=2\n";

}  // namespace

DCUDA_TEST(model_predictions_from_many_streams_interpolate_between_the_measured_counts) {
  using dcuda::model::predict_streams;
  const auto model = parse_model(concurrent_fits, "model.txt");
  const auto& fits = model.at(DCUDA_MODEL_PEER, DCUDA_MODEL_HOST).concurrent;
  DCUDA_CHECK_EQ(fits.size(), std::size_t{2});
  DCUDA_CHECK_EQ(fits[1].streams, 16);
  DCUDA_CHECK(near(fits[1].gap_us, 1.0));
  DCUDA_CHECK(near(fits[1].gap_ns_per_byte, 4.0));
  // T(m) = 8 us; each further message g + m G.
  DCUDA_CHECK(near(predict_streams(model, DCUDA_MODEL_PEER, DCUDA_MODEL_HOST, 0, 1, 4), 8.0));
  DCUDA_CHECK(near(predict_streams(model, DCUDA_MODEL_PEER, DCUDA_MODEL_HOST, 0, 11, 4), 38.0));
  DCUDA_CHECK(near(predict_streams(model, DCUDA_MODEL_PEER, DCUDA_MODEL_HOST, 0, 11, 16), 18.0));
  DCUDA_CHECK(
      near(predict_streams(model, DCUDA_MODEL_PEER, DCUDA_MODEL_HOST, 1000, 2, 16), 8.0 + 5.0));
  // 8 streams: halfway between 4 and 16 in log(streams): g 2 us, G 3 ns per byte.
  DCUDA_CHECK(near(predict_streams(model, DCUDA_MODEL_PEER, DCUDA_MODEL_HOST, 0, 3, 8), 12.0));
  DCUDA_CHECK(
      near(predict_streams(model, DCUDA_MODEL_PEER, DCUDA_MODEL_HOST, 1000, 3, 8), 8.0 + 10.0));
  // Beyond the measured counts the nearest fit holds.
  DCUDA_CHECK(near(predict_streams(model, DCUDA_MODEL_PEER, DCUDA_MODEL_HOST, 0, 2, 1), 11.0));
  DCUDA_CHECK(near(predict_streams(model, DCUDA_MODEL_PEER, DCUDA_MODEL_HOST, 0, 2, 64), 9.0));
  // Without concurrent fits one stream is the pipelined prediction and more an error.
  const auto plain = parse_model(two_fits, "model.txt");
  DCUDA_CHECK(near(predict_streams(plain, DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 8, 10, 1),
                   predict(plain, DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 8, 10)));
  DCUDA_CHECK(near(predict_streams(plain, DCUDA_MODEL_SAME_GPU, DCUDA_MODEL_HOST, 8, 1, 1),
                   predict(plain, DCUDA_MODEL_SAME_GPU, DCUDA_MODEL_HOST, 8, 1)));
  dcuda_error_code code{};
  DCUDA_CHECK(contains(
      error_of([&] { predict_streams(plain, DCUDA_MODEL_SAME_GPU, DCUDA_MODEL_HOST, 8, 1, 2); },
               &code),
      "no concurrent fit of same-gpu host, which 2 stream(s) need"));
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_STATE);
}

DCUDA_TEST(stream_counts_no_model_predicts_are_refused_as_arguments) {
  using dcuda::model::check_streams;
  using dcuda::model::predict_stream_waits;
  using dcuda::model::predict_streams;
  check_streams(DCUDA_MODEL_HOST, 1);
  check_streams(DCUDA_MODEL_HOST, 64);
  check_streams(DCUDA_MODEL_DEVICE, 1);
  const std::string below = "streams 0 is below 1";
  const std::string device =
      "streams 4 with the initiator DCUDA_MODEL_DEVICE: a rank issues its puts inside the kernel, "
      "not from streams (predict them with dcuda_model_predict, or pass streams 1)";
  dcuda_error_code code{};
  DCUDA_CHECK_EQ(error_of([] { check_streams(DCUDA_MODEL_HOST, 0); }, &code), below);
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_ARGUMENT);
  DCUDA_CHECK_EQ(error_of([] { check_streams(DCUDA_MODEL_DEVICE, -3); }, &code),
                 "streams -3 is below 1");
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_ARGUMENT);
  DCUDA_CHECK_EQ(error_of([] { check_streams(DCUDA_MODEL_DEVICE, 4); }, &code), device);
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_ARGUMENT);
  // The predictions refuse them the same way, even where the model has concurrent fits of the
  // device initiator (a file may hold them; no benchmark writes them).
  const auto model = parse_model(std::string(concurrent_fits) +
                                     "single peer device from_bytes=0 L_us=1 o_us=1 S_us=0 "
                                     "O_ns_per_byte=0 G_ns_per_byte=1\n"
                                     "concurrent peer device streams=4 g_us=1 G_ns_per_byte=1 "
                                     "wait_us=1\n",
                                 "model.txt");
  DCUDA_CHECK_EQ(
      error_of([&] { predict_streams(model, DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 8, 2, 4); },
               &code),
      device);
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_ARGUMENT);
  DCUDA_CHECK_EQ(
      error_of([&] { predict_streams(model, DCUDA_MODEL_PEER, DCUDA_MODEL_HOST, 8, 2, 0); }, &code),
      below);
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_ARGUMENT);
  DCUDA_CHECK_EQ(error_of([&] { predict_stream_waits(model, DCUDA_MODEL_PEER, 2, 0); }, &code),
                 below);
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_ARGUMENT);
}

DCUDA_TEST(model_stream_waits_cost_their_count_times_the_interpolated_wait) {
  using dcuda::model::predict_stream_waits;
  const auto model = parse_model(concurrent_fits, "model.txt");
  DCUDA_CHECK(near(predict_stream_waits(model, DCUDA_MODEL_PEER, 10, 4), 10.0));
  DCUDA_CHECK(near(predict_stream_waits(model, DCUDA_MODEL_PEER, 10, 8), 15.0));
  DCUDA_CHECK(near(predict_stream_waits(model, DCUDA_MODEL_PEER, 3, 64), 6.0));
  dcuda_error_code code{};
  DCUDA_CHECK(
      contains(error_of([&] { predict_stream_waits(model, DCUDA_MODEL_SAME_GPU, 1, 4); }, &code),
               "no concurrent fit of same-gpu host"));
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_STATE);
}

DCUDA_TEST(malformed_concurrent_fits_are_refused_with_their_line) {
  DCUDA_CHECK(
      contains(refusal_of("concurrent peer host streams=0 g_us=1 G_ns_per_byte=1 wait_us=0\n"),
               "model.txt:2: streams is not a whole number of at least 1 (0)"));
  DCUDA_CHECK(
      contains(refusal_of("concurrent peer host streams=2.5 g_us=1 G_ns_per_byte=1 wait_us=0\n"),
               "streams is not a whole number of at least 1 (2.5)"));
  DCUDA_CHECK(
      contains(refusal_of("concurrent peer host streams=4 g_us=-1 G_ns_per_byte=1 wait_us=0\n"),
               "g_us is negative"));
  DCUDA_CHECK(contains(refusal_of("concurrent peer host streams=4 g_us=1 G_ns_per_byte=1 "
                                  "wait_us=-1\n"),
                       "wait_us is negative"));
  DCUDA_CHECK(
      contains(refusal_of("concurrent peer host streams=4 g_us=1 G_ns_per_byte=1 wait_us=0\n"
                          "concurrent peer host streams=4 g_us=1 G_ns_per_byte=1 wait_us=0\n"),
               "model.txt:3: streams=4 of peer host does not follow the previous "
               "concurrent fit's 4"));
  DCUDA_CHECK(contains(refusal_of("concurrent peer host streams=4 g_us=1 wait_us=0\n"),
                       "G_ns_per_byte is missing"));
}

DCUDA_TEST(the_network_chunk_the_model_chooses_moves_large_messages_fastest) {
  using dcuda::model::best_network_chunk;
  // The network fits of 2 x H200 (bench/results/h200x2/model.txt): 1 MiB the least, 2 MiB within
  // 0.11% and 512 KiB within 1%; pieces of 64 KiB pay the per-message overhead 16 times as often,
  // pieces of 16 MiB leave nothing to overlap.
  const auto h200 = parse_model(
      "dcuda-model 1\n"
      "single network device from_bytes=0 L_us=0.512506 o_us=3.50793 S_us=1.40129 "
      "O_ns_per_byte=-10.6107 G_ns_per_byte=0.0861104\n"
      "single network device from_bytes=9 L_us=0.512506 o_us=7.92764 S_us=1.40129 "
      "O_ns_per_byte=2.02963 G_ns_per_byte=0.0861104\n"
      "single network device from_bytes=4097 L_us=0.512506 o_us=18.4253 S_us=1.40129 "
      "O_ns_per_byte=0.0801543 G_ns_per_byte=0.0861104\n"
      "pipelined network device g_us=2.601 A_ns_per_byte=462.151 B=-0.722876 "
      "largest_bytes=4194304 G_ns_per_byte=0.0861104\n",
      "model.txt");
  DCUDA_CHECK_EQ(best_network_chunk(h200, 64 << 10, 16 << 20).value_or(0), std::size_t{1} << 20);
  // Within a narrower range the nearest bound wins.
  DCUDA_CHECK_EQ(best_network_chunk(h200, 2 << 20, 16 << 20).value_or(0), std::size_t{2} << 20);
  // Chunks that do not divide the messages (3, 6 and 12 MiB): the last piece is priced at what
  // remains, so 3 MiB wins, 6 MiB 5% behind; priced as a whole chunk, the last piece would make
  // 6 MiB the least, 3 MiB 3% behind (a 4 MiB message as 3 MiB and 1 MiB, not two of 3 MiB).
  DCUDA_CHECK_EQ(best_network_chunk(h200, 3 << 20, 16 << 20).value_or(0), std::size_t{3} << 20);
  // A per-message cost ten times as large makes larger pieces pay: 2 MiB. By hand (us, m and c in
  // bytes): T(m) = 201 + 0.0002 m, and a further piece t(c) = max(200, 0.0001 c), the gap up to
  // c = 2,000,000. Pieces of 1 MiB or less pay 200 us for each piece after the first, at least
  // 0.00019 us a byte. From 2 MiB on, a message of m >= c takes T(c) + (m / c - 1) 0.0001 c and
  // one below the chunk T(m): 201 + 0.0001 (min(c, m) + m) either way, least at c = 2 MiB (a 4 MiB
  // message: 830.1 us in two pieces of 2 MiB, 1039.9 in one of 4 MiB, 1010.7 in four of 1 MiB).
  const auto slow_start = parse_model(
      "dcuda-model 1\n"
      "single network device from_bytes=0 L_us=1 o_us=200 S_us=0 O_ns_per_byte=0.1 "
      "G_ns_per_byte=0.1\n"
      "pipelined network device g_us=200 A_ns_per_byte=0 B=0 largest_bytes=4194304 "
      "G_ns_per_byte=0.1\n",
      "model.txt");
  DCUDA_CHECK_EQ(best_network_chunk(slow_start, 64 << 10, 16 << 20).value_or(0),
                 std::size_t{2} << 20);
  // A message below the chunk travels as one piece of its own size. Here a single message is
  // cheap, T(m) = 1 + 0.0001 m, and a further piece costs t(c) = 0.0001 c + 0.1 sqrt(c) (A = 100
  // ns a byte times c^-0.5). A message of m bytes then takes 1 + 0.0001 m + 0.1 (m / sqrt(k) -
  // sqrt(k)) with k = min(c, m), which falls as k grows: the largest chunk wins. Priced as a whole
  // chunk, a 1 MiB message would cost T(16 MiB), nearly 16 times its own T(1 MiB), and 1 MiB would
  // win.
  const auto cheap_messages = parse_model(
      "dcuda-model 1\n"
      "single network device from_bytes=0 L_us=1 o_us=0 S_us=0 O_ns_per_byte=0 "
      "G_ns_per_byte=0.1\n"
      "pipelined network device g_us=1 A_ns_per_byte=100 B=-0.5 largest_bytes=67108864 "
      "G_ns_per_byte=0.1\n",
      "model.txt");
  DCUDA_CHECK_EQ(best_network_chunk(cheap_messages, 64 << 10, 16 << 20).value_or(0),
                 std::size_t{16} << 20);
  DCUDA_CHECK_EQ(best_network_chunk(cheap_messages, 64 << 10, 4 << 20).value_or(0),
                 std::size_t{4} << 20);
  // No network fit: nothing to choose from.
  DCUDA_CHECK(!best_network_chunk(parse_model(two_fits, "model.txt"), 64 << 10, 16 << 20));
}
