// What a failing runtime call throws, as text, for tests that check the message a user would see.
#pragma once

#include <string>

#include "runtime/error.h"

namespace dcuda_test {

// The message of the dcuda::runtime::error `body` throws, with its code; empty when it throws none.
template <typename Body>
std::string error_of(Body&& body, dcuda_error_code* code = nullptr) {
  try {
    body();
  } catch (const dcuda::runtime::error& e) {
    if (code != nullptr) *code = e.code();
    return e.what();
  }
  return {};
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace dcuda_test
