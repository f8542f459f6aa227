// The case studies' shared host code: the command line, the result line, and the split of items
// among ranks that the kernels and the CPU models share.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "dcuda_arguments.h"
#include "even_share.h"
#include "options.h"
#include "result.h"
#include "test_main.h"

DCUDA_TEST(app_options_read_values_and_skip_dcuda_arguments) {
  const char* argv[] = {"prog", "--dcuda-ranks-per-device=4", "--ny", "96", "--check", "0"};
  app_options options(6, const_cast<char**>(argv), "prog",
                      {{"nx", 512, "x"}, {"ny", 2048, "y"}, {"check", 1, "check"}});
  DCUDA_CHECK_EQ(options.get("nx"), 512);
  DCUDA_CHECK_EQ(options.get_int("ny"), 96);
  DCUDA_CHECK_EQ(options.get("check"), 0);
  DCUDA_CHECK_EQ(options.summary(), std::string("nx=512 ny=96 check=0"));
}

DCUDA_TEST(case_study_options_put_the_shared_ones_between_sizes_and_extras) {
  const char* argv[] = {"prog", "--seed", "7"};
  app_options options(3, const_cast<char**>(argv), "prog",
                      case_study_options({{"n", 64, "size"}}, {{"threads", 256, "threads"}}));
  DCUDA_CHECK_EQ(options.summary(),
                 std::string("n=64 iterations=100 warmup=5 check=1 seed=7 runs=1 threads=256"));
}

DCUDA_TEST(run_count_takes_1_to_1000_runs_and_names_a_bad_value) {
  const auto runs_of = [](const char* value) {
    const char* argv[] = {"prog", "--runs", value};
    return run_count(app_options(3, const_cast<char**>(argv), "prog", case_study_options({}, {})));
  };
  DCUDA_CHECK_EQ(runs_of("3"), 3);
  DCUDA_CHECK_EQ(runs_of("1000"), 1000);
  for (const char* bad : {"0", "-2", "1001"}) {
    std::string message;
    try {
      runs_of(bad);
    } catch (const std::invalid_argument& error) {
      message = error.what();
    }
    DCUDA_CHECK_EQ(message, "--runs " + std::string(bad) + ": must be 1 to 1000");
  }
}

DCUDA_TEST(app_result_json_carries_every_field) {
  app_result result;
  result.app = "stencil";
  result.version = "dcuda";
  result.gpus = 4;
  result.ranks_per_gpu = 131;
  result.iterations = 100;
  result.time_ms = 12.5;
  result.comm_ms = -1;
  result.check = "passed";
  result.max_error = 0;
  result.tolerance = 1e-10;
  result.parameters = "nx=\"512\"";
  const std::string json = result_json(result);
  DCUDA_CHECK_EQ(json,
                 std::string("{\"app\": \"stencil\", \"version\": \"dcuda\", \"gpus\": 4, "
                             "\"ranks_per_gpu\": 131, \"iterations\": 100, \"time_ms\": 12.5, "
                             "\"comm_ms\": -1, \"check\": \"passed\", \"max_error\": 0, "
                             "\"tolerance\": 1e-10, \"parameters\": \"nx=\\\"512\\\"\"}"));
}

// The user's rank count, by setting or argument, wins over the application's limit.
DCUDA_TEST(dcuda_arguments_add_the_application_rank_limit_unless_the_user_set_one) {
  const char* saved = std::getenv("DCUDA_RANKS_PER_DEVICE");
  const std::string saved_value = saved != nullptr ? saved : "";
  unsetenv("DCUDA_RANKS_PER_DEVICE");

  const char* plain[] = {"prog", "--segments", "32"};
  dcuda_arguments limited(3, const_cast<char**>(plain), 32);
  DCUDA_CHECK_EQ(limited.argc(), 4);
  DCUDA_CHECK_EQ(std::string(limited.argv()[0]), std::string("prog"));
  DCUDA_CHECK_EQ(std::string(limited.argv()[2]), std::string("32"));
  DCUDA_CHECK_EQ(std::string(limited.argv()[3]), std::string("--dcuda-ranks-per-device=32"));
  DCUDA_CHECK(limited.argv()[4] == nullptr);

  const char* chosen[] = {"prog", "--dcuda-ranks-per-device=8", "--segments", "32"};
  dcuda_arguments by_argument(4, const_cast<char**>(chosen), 32);
  DCUDA_CHECK_EQ(by_argument.argc(), 4);
  DCUDA_CHECK_EQ(std::string(by_argument.argv()[1]), std::string("--dcuda-ranks-per-device=8"));
  DCUDA_CHECK(by_argument.argv()[4] == nullptr);

  setenv("DCUDA_RANKS_PER_DEVICE", "8", 1);
  dcuda_arguments by_setting(3, const_cast<char**>(plain), 32);
  DCUDA_CHECK_EQ(by_setting.argc(), 3);
  DCUDA_CHECK(by_setting.argv()[3] == nullptr);

  if (saved != nullptr)
    setenv("DCUDA_RANKS_PER_DEVICE", saved_value.c_str(), 1);
  else
    unsetenv("DCUDA_RANKS_PER_DEVICE");
}

// The stencil's 2048 rows and the particles' 416 segments over a GPU's 264 ranks (the default
// sizes on an H200), and edge cases: every item in exactly one share, shares in order, sizes
// differing by at most one, and no overflow where parts * items exceeds 2^31.
DCUDA_TEST(even_share_gives_every_item_to_one_part_in_order_with_sizes_within_one) {
  struct split {
    int parts, items;
  };
  for (const split s : {split{264, 2048}, split{264, 416}, split{7, 3}, split{1, 5}, split{5, 5},
                        split{132, 410600}, split{65536, 2000000000}}) {
    int next = 0, smallest = s.items, largest = 0;
    for (int part = 0; part < s.parts; ++part) {
      const item_share share = even_share(part, s.parts, s.items);
      DCUDA_CHECK_EQ(share.first, next);
      DCUDA_CHECK(share.end >= share.first);
      smallest = std::min(smallest, share.end - share.first);
      largest = std::max(largest, share.end - share.first);
      next = share.end;
    }
    DCUDA_CHECK_EQ(next, s.items);
    DCUDA_CHECK(largest - smallest <= 1);
  }
  // 2048 rows over 264 ranks: 7.76 a rank, so 200 ranks get 8 rows and 64 get 7.
  int eight = 0;
  for (int part = 0; part < 264; ++part)
    eight += even_share(part, 264, 2048).end - even_share(part, 264, 2048).first == 8;
  DCUDA_CHECK_EQ(eight, 200);
}
