// How failures end a process (runtime/signal_watch.h, runtime/exit_check.h): a SIGTERM or SIGINT
// during a run becomes DCUDA_ERROR_INTERRUPTED naming the process, a second one ends the process
// at once, and a process of a job that leaves a context unfinished is named at exit.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "runtime/exit_check.h"
#include "runtime/signal_watch.h"
#include "test_main.h"

using namespace dcuda;

namespace {

volatile std::sig_atomic_t program_handler_calls = 0;
extern "C" void program_handler(int) {
  program_handler_calls = program_handler_calls + 1;
}

}  // namespace

DCUDA_TEST(a_signal_during_a_run_becomes_an_interruption_naming_the_process) {
  {
    const runtime::signal_watch watch;
    DCUDA_CHECK(!runtime::received_signal().has_value());
    std::raise(SIGTERM);  // handled: the test process goes on
    DCUDA_CHECK(runtime::received_signal().has_value());
    DCUDA_CHECK_EQ(*runtime::received_signal(), SIGTERM);
    const runtime::error e = runtime::interruption_error(*runtime::received_signal(), 3);
    DCUDA_CHECK_EQ(e.code(), DCUDA_ERROR_INTERRUPTED);
    DCUDA_CHECK_EQ(std::string(e.what()),
                   "dcuda_host_run: process 3 received SIGTERM; the run was stopped (a second "
                   "SIGTERM or SIGINT ends the process at once)");
  }
  {
    const runtime::signal_watch watch;  // a new watch starts without the old signal
    DCUDA_CHECK(!runtime::received_signal().has_value());
    std::raise(SIGINT);
    DCUDA_CHECK_EQ(runtime::received_signal().value_or(0), SIGINT);
  }
  char buffer[24];
  DCUDA_CHECK_EQ(std::string(runtime::signal_name(SIGHUP, buffer)),
                 "signal " + std::to_string(SIGHUP));
}

DCUDA_TEST(the_program_s_own_signal_handlers_come_back_after_the_run) {
  std::signal(SIGTERM, program_handler);
  std::signal(SIGINT, program_handler);
  { const runtime::signal_watch watch; }
  program_handler_calls = 0;
  std::raise(SIGTERM);
  std::raise(SIGINT);
  DCUDA_CHECK_EQ(static_cast<int>(program_handler_calls), 2);
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGINT, SIG_DFL);
}

DCUDA_TEST(a_second_signal_ends_the_process_at_once) {
  const pid_t child = fork();
  DCUDA_CHECK(child >= 0);
  if (child == 0) {
    const runtime::signal_watch watch;
    std::raise(SIGTERM);  // noted
    std::raise(SIGTERM);  // the default action: the child ends here
    _exit(0);
  }
  int status = 0;
  DCUDA_CHECK_EQ(waitpid(child, &status, 0), child);
  DCUDA_CHECK(WIFSIGNALED(status));
  DCUDA_CHECK_EQ(WTERMSIG(status), SIGTERM);
}

DCUDA_TEST(an_unfinished_context_is_reported_only_in_a_job_of_several_processes) {
  DCUDA_CHECK(!runtime::unfinished_context_report().has_value());
  runtime::note_live_context(0, 1);  // alone: nobody waits for it
  DCUDA_CHECK(!runtime::unfinished_context_report().has_value());
  runtime::note_finished_context(1);
  runtime::note_live_context(2, 4);
  const auto report = runtime::unfinished_context_report();
  DCUDA_CHECK(report.has_value());
  DCUDA_CHECK_EQ(report->rfind("process 2 returned from main (or called exit) without "
                               "dcuda_host_finish while it ran in a job of 4 processes",
                               0),
                 0u);
  runtime::note_finished_context(4);  // else this test program would fail at its exit
  DCUDA_CHECK(!runtime::unfinished_context_report().has_value());
}
