// dcuda_log's number formatting, checked against the host's printf.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>

#include "dcuda/detail/protocol/text_format.h"
#include "test_main.h"

namespace {

using namespace dcuda::protocol;

template <typename Write>
std::string format(Write&& write, int capacity = 64) {
  char storage[64];
  text_buffer out{storage, capacity, 0, false};
  write(out);
  return std::string(storage, static_cast<std::size_t>(out.length));
}

std::string printf_g(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

}  // namespace

DCUDA_TEST(integers_format_like_printf) {
  for (long long v : {0LL, 7LL, -7LL, 1234567890123LL, std::numeric_limits<long long>::min(),
                      std::numeric_limits<long long>::max()}) {
    DCUDA_CHECK_EQ(format([&](auto& o) { append_signed(o, v); }), std::to_string(v));
  }
  DCUDA_CHECK_EQ(format([&](auto& o) { append_unsigned(o, 18446744073709551615ull); }),
                 std::string("18446744073709551615"));
  DCUDA_CHECK_EQ(format([&](auto& o) { append_unsigned(o, 255, 16); }), std::string("ff"));
}

DCUDA_TEST(doubles_format_like_printf_g) {
  for (double v : {0.0, -0.0, 1.0, -1.5, 0.1, 123456.0, 1234567.0, 0.0001, 0.00001234, 3.14159265,
                   2.5e-300, 6.02214076e23, 999999.4, 1e100, 42.0, 100.0, 1e-4, 65536.0}) {
    DCUDA_CHECK_EQ(format([&](auto& o) { append_double(o, v); }), printf_g(v));
  }
  DCUDA_CHECK_EQ(format([&](auto& o) { append_double(o, std::nan("")); }), std::string("nan"));
  DCUDA_CHECK_EQ(format([&](auto& o) { append_double(o, -INFINITY); }), std::string("-inf"));
}

DCUDA_TEST(random_doubles_read_back_within_six_digits) {
  std::mt19937_64 random(12345);
  std::uniform_real_distribution<double> mantissa(-10.0, 10.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (int i = 0; i < 20000; ++i) {
    const double v = mantissa(random) * std::pow(10.0, exponent(random));
    const std::string text = format([&](auto& o) { append_double(o, v); });
    const double back = std::strtod(text.c_str(), nullptr);
    DCUDA_CHECK(std::fabs(back - v) <= 5.1e-6 * std::fabs(v));
  }
}

DCUDA_TEST(text_is_cut_at_capacity_and_marked_truncated) {
  char storage[4];
  text_buffer out{storage, 4, 0, false};
  append_text(out, "abcdef");
  DCUDA_CHECK_EQ(out.length, 4);
  DCUDA_CHECK(out.truncated);
  DCUDA_CHECK_EQ(std::string(storage, 4), std::string("abcd"));
}
