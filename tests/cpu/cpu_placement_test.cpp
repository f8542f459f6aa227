// The verbose start-up line about where a process runs (bootstrap/cpu_placement.h).
#include <sched.h>

#include <string>
#include <vector>

#include "bootstrap/cpu_placement.h"
#include "test_main.h"

namespace {
using namespace dcuda::bootstrap;
}  // namespace

DCUDA_TEST(cpu_lists_print_as_ranges) {
  DCUDA_CHECK_EQ(cpu_list_text({}), std::string(""));
  DCUDA_CHECK_EQ(cpu_list_text({5}), std::string("5"));
  DCUDA_CHECK_EQ(cpu_list_text({0, 1, 2, 3, 8, 10, 11}), std::string("0-3,8,10-11"));
  DCUDA_CHECK_EQ(cpu_list_text({1, 3, 5}), std::string("1,3,5"));
}

DCUDA_TEST(one_cpu_gets_a_hint_and_several_do_not) {
  const std::string alone = describe_cpu_placement(2, {7});
  DCUDA_CHECK(alone.rfind("dcuda: process 2 runs on CPU 7: ", 0) == 0);
  DCUDA_CHECK(alone.find("--bind-to none") != std::string::npos);
  DCUDA_CHECK_EQ(describe_cpu_placement(0, {0, 1, 2, 3}),
                 std::string("dcuda: process 0 runs on CPUs 0-3\n"));
}

DCUDA_TEST(allowed_cpus_are_the_affinity_mask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  DCUDA_CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
  const std::vector<int> cpus = allowed_cpus();
  DCUDA_CHECK_EQ(static_cast<int>(cpus.size()), CPU_COUNT(&set));
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    DCUDA_CHECK(CPU_ISSET(cpus[i], &set));
    if (i > 0) DCUDA_CHECK(cpus[i] > cpus[i - 1]);
  }
}
