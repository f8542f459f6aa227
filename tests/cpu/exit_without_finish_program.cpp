// A process that returns from main with a live context (as dcuda_host_init notes it, without the
// GPU that a real context needs). CTest runs it (cmake/expect_error_exit.cmake):
//   exit_without_finish_program PROCESS COUNT
// With COUNT > 1 the exit hook names process PROCESS, the program's handler gets
// DCUDA_ERROR_INVALID_STATE, and the exit status is 1; with COUNT 1 the process ends as it wanted.
#include <cstdio>
#include <cstdlib>

#include "dcuda/host.h"
#include "runtime/exit_check.h"

namespace {

void write_error(const dcuda_error_info* error, void*) {
  std::fprintf(stderr, "handler: code=%s call=%s\n", dcuda_error_name(error->code), error->call);
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc != 3) return 2;
  dcuda_host_set_error_handler(write_error, nullptr);
  dcuda::runtime::note_live_context(std::atoi(argv[1]), std::atoi(argv[2]));
  std::printf("returning from main\n");
  return 0;
}
