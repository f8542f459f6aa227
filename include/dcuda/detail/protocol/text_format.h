// Formatting of numbers and text into a fixed buffer, for dcuda_log on the device (which has no
// snprintf). Output follows printf's "%d", "%u" and "%.6g" so log lines read as host code's would.
#pragma once

#include <cmath>
#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

struct text_buffer {
  char* data;
  int capacity;  // bytes available in data
  int length;    // bytes used; never exceeds capacity (extra text is dropped)
  bool truncated;

  DCUDA_HD void put(char c) {
    if (length < capacity) {
      data[length++] = c;
    } else {
      truncated = true;
    }
  }
};

DCUDA_HD inline void append_text(text_buffer& out, const char* text) {
  if (text == nullptr) text = "(null)";
  for (; *text != '\0'; ++text) out.put(*text);
}

DCUDA_HD inline void append_unsigned(text_buffer& out, std::uint64_t value, unsigned base = 10,
                                     int min_digits = 1) {
  char digits[24];
  int n = 0;
  do {
    const unsigned d = static_cast<unsigned>(value % base);
    digits[n++] = static_cast<char>(d < 10 ? '0' + d : 'a' + d - 10);
    value /= base;
  } while (value != 0 && n < 24);
  while (n < min_digits && n < 24) digits[n++] = '0';
  while (n > 0) out.put(digits[--n]);
}

DCUDA_HD inline void append_signed(text_buffer& out, std::int64_t value) {
  if (value < 0) {
    out.put('-');
    append_unsigned(out, static_cast<std::uint64_t>(-(value + 1)) + 1u);
  } else {
    append_unsigned(out, static_cast<std::uint64_t>(value));
  }
}

DCUDA_HD inline double exact_power_of_ten(int k) {  // exact for 0 <= k <= 22
  double p = 1.0;
  for (int i = 0; i < k; ++i) p *= 10.0;
  return p;
}

// printf("%.6g")-style: six significant digits, fixed notation for exponents -4..5, scientific
// otherwise, trailing zeros removed.
DCUDA_HD inline void append_double(text_buffer& out, double value) {
  if (value != value) return append_text(out, "nan");
  if (std::signbit(value)) {
    out.put('-');
    value = -value;
  }
  if (value > 1.7976931348623157e308) return append_text(out, "inf");
  if (value == 0.0) return out.put('0');

  int exponent = static_cast<int>(std::floor(std::log10(value)));
  const auto scale_to_six_digits = [](double v, int e) {
    const int shift = 5 - e;
    return shift >= 0 ? v * exact_power_of_ten(shift < 308 ? shift : 308)
                      : v / exact_power_of_ten(-shift < 308 ? -shift : 308);
  };
  std::uint64_t digits = static_cast<std::uint64_t>(scale_to_six_digits(value, exponent) + 0.5);
  if (digits >= 1000000u) {  // log10 undershot, or rounding carried into a seventh digit
    ++exponent;
    digits = static_cast<std::uint64_t>(scale_to_six_digits(value, exponent) + 0.5);
  } else if (digits < 100000u) {  // log10 overshot
    --exponent;
    digits = static_cast<std::uint64_t>(scale_to_six_digits(value, exponent) + 0.5);
  }
  char six[6];
  for (int i = 5; i >= 0; --i) {
    six[i] = static_cast<char>('0' + digits % 10);
    digits /= 10;
  }
  int significant = 6;
  while (significant > 1 && six[significant - 1] == '0') --significant;

  if (exponent >= -4 && exponent < 6) {
    if (exponent < 0) {
      append_text(out, "0.");
      for (int i = 0; i < -exponent - 1; ++i) out.put('0');
      for (int i = 0; i < significant; ++i) out.put(six[i]);
      return;
    }
    for (int i = 0; i <= exponent; ++i) out.put(six[i]);
    if (significant > exponent + 1) {
      out.put('.');
      for (int i = exponent + 1; i < significant; ++i) out.put(six[i]);
    }
    return;
  }
  out.put(six[0]);
  if (significant > 1) {
    out.put('.');
    for (int i = 1; i < significant; ++i) out.put(six[i]);
  }
  out.put('e');
  out.put(exponent < 0 ? '-' : '+');
  append_unsigned(out, static_cast<std::uint64_t>(exponent < 0 ? -exponent : exponent), 10, 2);
}

}  // namespace dcuda::protocol
