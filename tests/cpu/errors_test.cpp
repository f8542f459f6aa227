// The error codes' names, the unknown-setting warning and DCUDA_DEBUG (runtime/settings.h).
#include <string>
#include <vector>

#include "dcuda/host.h"
#include "runtime/error.h"
#include "runtime/settings.h"
#include "test_main.h"

using namespace dcuda;

namespace {

using environment = std::vector<std::pair<std::string, std::string>>;

std::vector<std::string> warnings_for(const std::vector<std::string>& arguments,
                                      const environment& variables) {
  return runtime::unknown_settings(arguments, variables);
}

}  // namespace

DCUDA_TEST(error_names_are_the_enumerators) {
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(DCUDA_ERROR_INVALID_ARGUMENT)),
                 "DCUDA_ERROR_INVALID_ARGUMENT");
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(DCUDA_ERROR_INVALID_STATE)),
                 "DCUDA_ERROR_INVALID_STATE");
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(DCUDA_ERROR_SETTING)), "DCUDA_ERROR_SETTING");
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(DCUDA_ERROR_DEVICE_CALL)), "DCUDA_ERROR_DEVICE_CALL");
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(DCUDA_ERROR_TIMEOUT)), "DCUDA_ERROR_TIMEOUT");
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(DCUDA_ERROR_CUDA)), "DCUDA_ERROR_CUDA");
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(DCUDA_ERROR_MPI)), "DCUDA_ERROR_MPI");
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(DCUDA_ERROR_PEER)), "DCUDA_ERROR_PEER");
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(DCUDA_ERROR_INTERNAL)), "DCUDA_ERROR_INTERNAL");
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(DCUDA_ERROR_INTERRUPTED)), "DCUDA_ERROR_INTERRUPTED");
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(static_cast<dcuda_error_code>(0))),
                 "DCUDA_ERROR_UNKNOWN");
  DCUDA_CHECK_EQ(std::string(dcuda_error_name(static_cast<dcuda_error_code>(15))),
                 "DCUDA_ERROR_UNKNOWN");
  // The codes are part of the API: their values must not move.
  DCUDA_CHECK_EQ(static_cast<int>(DCUDA_ERROR_INVALID_ARGUMENT), 1);
  DCUDA_CHECK_EQ(static_cast<int>(DCUDA_ERROR_INTERNAL), 9);
  DCUDA_CHECK_EQ(static_cast<int>(DCUDA_ERROR_INTERRUPTED), 10);
}

DCUDA_TEST(errors_carry_their_code_and_whether_the_gpu_is_usable) {
  DCUDA_CHECK_EQ(runtime::code_of(runtime::error("plain")), DCUDA_ERROR_INTERNAL);
  DCUDA_CHECK_EQ(runtime::code_of(runtime::error(DCUDA_ERROR_TIMEOUT, "stuck")),
                 DCUDA_ERROR_TIMEOUT);
  DCUDA_CHECK_EQ(runtime::code_of(std::runtime_error("other")), DCUDA_ERROR_INTERNAL);
  try {
    runtime::throw_cuda_error(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)");
  } catch (const runtime::error& e) {
    DCUDA_CHECK_EQ(e.code(), DCUDA_ERROR_CUDA);
    DCUDA_CHECK_EQ(std::string(e.what()).rfind("cudaMalloc(&p, n) failed: ", 0), 0u);
  }
  for (auto code : {DCUDA_ERROR_INVALID_ARGUMENT, DCUDA_ERROR_INVALID_STATE, DCUDA_ERROR_SETTING}) {
    DCUDA_CHECK(runtime::gpu_usable_after(code));
  }
  for (auto code : {DCUDA_ERROR_DEVICE_CALL, DCUDA_ERROR_TIMEOUT, DCUDA_ERROR_CUDA, DCUDA_ERROR_MPI,
                    DCUDA_ERROR_PEER, DCUDA_ERROR_INTERNAL, DCUDA_ERROR_INTERRUPTED}) {
    DCUDA_CHECK(!runtime::gpu_usable_after(code));
  }
}

DCUDA_TEST(malformed_setting_is_a_setting_error) {
  try {
    runtime::read_settings({}, {{"DCUDA_WAIT_TIMEOUT", "soon"}});
    throw dcuda_test::failure("no error for DCUDA_WAIT_TIMEOUT=soon");
  } catch (const runtime::error& e) {
    DCUDA_CHECK_EQ(e.code(), DCUDA_ERROR_SETTING);
  }
}

DCUDA_TEST(edit_distance_counts_insertions_deletions_substitutions) {
  DCUDA_CHECK_EQ(runtime::edit_distance("", ""), 0u);
  DCUDA_CHECK_EQ(runtime::edit_distance("abc", ""), 3u);
  DCUDA_CHECK_EQ(runtime::edit_distance("", "ab"), 2u);
  DCUDA_CHECK_EQ(runtime::edit_distance("kitten", "sitting"), 3u);
  DCUDA_CHECK_EQ(runtime::edit_distance("DCUDA_WAIT_TIMOUT", "DCUDA_WAIT_TIMEOUT"), 1u);
  DCUDA_CHECK_EQ(runtime::edit_distance("DCUDA_DEVCIE", "DCUDA_DEVICE"), 2u);
}

DCUDA_TEST(unknown_variable_is_named_with_the_nearest_setting) {
  const auto warnings = warnings_for({}, {{"DCUDA_WAIT_TIMOUT", "5"}});
  DCUDA_CHECK_EQ(warnings.size(), 1u);
  DCUDA_CHECK_EQ(warnings[0],
                 "unknown setting DCUDA_WAIT_TIMOUT (did you mean DCUDA_WAIT_TIMEOUT?)");
  // Suggested from the variables that are not settings too: a misspelt test-suite variable.
  DCUDA_CHECK_EQ(warnings_for({}, {{"DCUDA_TEST_SHARE_GPU", "1"}})[0],
                 "unknown setting DCUDA_TEST_SHARE_GPU (did you mean DCUDA_TEST_SHARE_GPUS?)");
}

DCUDA_TEST(unknown_variable_far_from_every_setting_gets_no_suggestion) {
  const auto warnings = warnings_for({}, {{"DCUDA_FOO", "1"}});
  DCUDA_CHECK_EQ(warnings.size(), 1u);
  DCUDA_CHECK_EQ(warnings[0], "unknown setting DCUDA_FOO");
}

DCUDA_TEST(unknown_argument_is_named_with_the_nearest_setting) {
  const auto warnings = warnings_for(
      {"--dcuda-ranks-per-devise=4", "--dcuda-colour=red", "input.txt", "--other"}, {});
  DCUDA_CHECK_EQ(warnings.size(), 2u);
  DCUDA_CHECK_EQ(
      warnings[0],
      "unknown setting --dcuda-ranks-per-devise (did you mean --dcuda-ranks-per-device?)");
  DCUDA_CHECK_EQ(warnings[1], "unknown setting --dcuda-colour");
  // Test-suite variables have no argument form.
  DCUDA_CHECK_EQ(warnings_for({"--dcuda-test-share-gpus=1"}, {})[0],
                 "unknown setting --dcuda-test-share-gpus");
}

DCUDA_TEST(argument_without_value_is_named) {
  const auto warnings = warnings_for({"--dcuda-device", "2"}, {});
  DCUDA_CHECK_EQ(warnings.size(), 1u);
  DCUDA_CHECK_EQ(warnings[0],
                 "setting --dcuda-device without a value is ignored; write --dcuda-device=VALUE, "
                 "one word");
}

DCUDA_TEST(known_names_get_no_warning) {
  const environment variables = {{"DCUDA_DEVICE", "0"},
                                 {"DCUDA_RANKS_PER_DEVICE", "2"},
                                 {"DCUDA_WAIT_TIMEOUT", "1"},
                                 {"DCUDA_FORCE_NETWORK", "1"},
                                 {"DCUDA_VERBOSE", "1"},
                                 {"DCUDA_DEBUG", "INFO"},
                                 {"DCUDA_NETWORK_TRACE", "trace"},
                                 {"DCUDA_HOST_WORLD_BARRIER", "1"},
                                 {"DCUDA_TEST_SHARE_GPUS", "1"},
                                 {"DCUDA_TEST_SHARE_WINDOWS", "1"},
                                 {"DCUDA_BUILD_TESTS", "ON"},
                                 {"DCUDA_WARNINGS_AS_ERRORS", "ON"},
                                 {"DCUDA_PREFIX", "/opt/dcuda"},
                                 {"OMPI_COMM_WORLD_SIZE", "2"}};
  const std::vector<std::string> arguments = {"--dcuda-device=0",
                                              "--dcuda-ranks-per-device=2",
                                              "--dcuda-wait-timeout=1",
                                              "--dcuda-force-network=1",
                                              "--dcuda-verbose=1",
                                              "--dcuda-debug=trace",
                                              "--dcuda-network-trace=t",
                                              "--dcuda-host-world-barrier=1",
                                              "--dcuda-force-network=",
                                              "-dcuda-device",
                                              "plain",
                                              "--dcuda"};
  const auto warnings = warnings_for(arguments, variables);
  for (const auto& warning : warnings) std::printf("unexpected: %s\n", warning.c_str());
  DCUDA_CHECK(warnings.empty());
}

DCUDA_TEST(debug_level_reads_any_case_and_verbose_means_info) {
  DCUDA_CHECK(runtime::read_settings({}, {}).debug == runtime::log_level::warn);
  DCUDA_CHECK(runtime::read_settings({}, {{"DCUDA_DEBUG", "info"}}).debug ==
              runtime::log_level::info);
  DCUDA_CHECK(runtime::read_settings({}, {{"DCUDA_DEBUG", "Trace"}}).debug ==
              runtime::log_level::trace);
  DCUDA_CHECK(runtime::read_settings({"--dcuda-debug=WARN"}, {{"DCUDA_DEBUG", "TRACE"}}).debug ==
              runtime::log_level::warn);
  // INFO prints what DCUDA_VERBOSE=1 printed, and DCUDA_VERBOSE=1 is INFO.
  DCUDA_CHECK(runtime::read_settings({}, {{"DCUDA_DEBUG", "INFO"}}).verbose);
  DCUDA_CHECK(runtime::read_settings({}, {{"DCUDA_VERBOSE", "1"}}).debug ==
              runtime::log_level::info);
  DCUDA_CHECK(
      runtime::read_settings({}, {{"DCUDA_VERBOSE", "1"}, {"DCUDA_DEBUG", "TRACE"}}).debug ==
      runtime::log_level::trace);
  DCUDA_CHECK(!runtime::read_settings({}, {{"DCUDA_DEBUG", "WARN"}}).verbose);
}

DCUDA_TEST(bad_debug_level_is_a_setting_error_naming_the_value) {
  for (const auto& [arguments, variables, value] :
       {std::tuple<std::vector<std::string>, environment, std::string>{
            {}, {{"DCUDA_DEBUG", "loud"}}, "loud"},
        {{"--dcuda-debug=2"}, {}, "2"},
        {{}, {{"DCUDA_DEBUG", ""}}, ""}}) {
    try {
      runtime::read_settings(arguments, variables);
      throw dcuda_test::failure("no error for DCUDA_DEBUG '" + value + "'");
    } catch (const runtime::error& e) {
      DCUDA_CHECK_EQ(e.code(), DCUDA_ERROR_SETTING);
      const std::string text = e.what();
      DCUDA_CHECK(text.find("DCUDA_DEBUG (--dcuda-debug=...)") != std::string::npos);
      DCUDA_CHECK(text.find("'" + value + "'; expected WARN, INFO or TRACE") != std::string::npos);
    }
  }
}
