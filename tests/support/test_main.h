// A small test harness shared by the CPU and GPU tests (the GPU machines have no GoogleTest).
//
//   DCUDA_TEST(name) { DCUDA_CHECK(cond); DCUDA_CHECK_EQ(a, b); }
//
// `prog` runs every test; `prog --case NAME` runs one (CTest registers each case that way);
// `prog --list` prints the names. The last line is "N passed, N failed, N skipped". A test
// skips by throwing dcuda_test::skip{"reason"}; a program whose only test skipped exits with 77,
// which CTest reports as skipped.
#pragma once

#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dcuda_test {

struct skip {
  std::string reason;
};

struct failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct test_case {
  const char* name;
  std::function<void()> body;
};

inline std::vector<test_case>& registry() {
  static std::vector<test_case> tests;
  return tests;
}

struct registration {
  registration(const char* name, std::function<void()> body) {
    registry().push_back({name, std::move(body)});
  }
};

template <typename A, typename B>
void check_equal(const A& a, const B& b, const char* a_text, const char* b_text, const char* file,
                 int line) {
  if (a == b) return;
  std::ostringstream message;
  message << file << ":" << line << ": expected " << a_text << " == " << b_text << ", got " << a
          << " vs " << b;
  throw failure(message.str());
}

inline int run_tests(int argc, char** argv) {
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list") == 0) {
      for (const auto& test : registry()) std::printf("%s\n", test.name);
      return 0;
    }
    if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) only = argv[++i];
  }
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& test : registry()) {
    if (only != nullptr && std::strcmp(only, test.name) != 0) continue;
    try {
      test.body();
      ++passed;
      std::printf("PASS %s\n", test.name);
    } catch (const skip& s) {
      ++skipped;
      std::printf("SKIP %s: %s\n", test.name, s.reason.c_str());
    } catch (const std::exception& e) {
      ++failed;
      std::printf("FAIL %s: %s\n", test.name, e.what());
    }
    std::fflush(stdout);
  }
  if (only != nullptr && passed + failed + skipped == 0) {
    std::printf("FAIL: no test named %s\n", only);
    return 1;
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  if (failed > 0) return 1;
  return (skipped > 0 && passed == 0) ? 77 : 0;
}

}  // namespace dcuda_test

#define DCUDA_TEST_CONCAT2(a, b) a##b
#define DCUDA_TEST_CONCAT(a, b) DCUDA_TEST_CONCAT2(a, b)
#define DCUDA_TEST(name)                                                                 \
  static void name();                                                                    \
  static ::dcuda_test::registration DCUDA_TEST_CONCAT(registration_, name)(#name, name); \
  static void name()

#define DCUDA_CHECK(condition)                                                             \
  do {                                                                                     \
    if (!(condition)) {                                                                    \
      throw ::dcuda_test::failure(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                                  ": check failed: " #condition);                          \
    }                                                                                      \
  } while (0)

#define DCUDA_CHECK_EQ(a, b) ::dcuda_test::check_equal((a), (b), #a, #b, __FILE__, __LINE__)
