// The boundary of the C-style API: every public host call runs its body inside `guarded`, the one
// place where a failure becomes a message on standard error, a call of the program's error
// handler and exit status 1 (the API returns no error codes: include/dcuda/host.h).
#pragma once

#include <exception>

#include "runtime/error.h"

namespace dcuda::runtime {

// The context behind a handle the program passed to `call`; an error unless dcuda_host_init made
// it and dcuda_host_finish has not ended it.
dcuda_host_context& live_context(const char* call, dcuda_host_context_handle ctx);

template <typename Body>
auto guarded(const char* call, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception& failure) {
    report_and_exit(call, failure);
  }
}

}  // namespace dcuda::runtime
