// MPI for dcuda's processes: initialised by dcuda unless the application already did it, and
// finalised only by whoever initialised it. dcuda calls MPI from more than one thread (the main
// thread for set-up, the host proxy while a kernel runs), never from two at once, so it needs at
// least MPI_THREAD_SERIALIZED. While a run of dcuda_host_run_async is in flight the program's own
// thread may call MPI beside dcuda's: that needs MPI_THREAD_MULTIPLE (docs/api.md), which dcuda
// requests when it initialises MPI.
#pragma once

#include <mpi.h>

namespace dcuda::bootstrap {

class mpi_session {
 public:
  // argc/argv may be null. Throws runtime::error when MPI cannot give the thread level needed.
  mpi_session(int* argc, char*** argv);
  mpi_session(const mpi_session&) = delete;
  mpi_session& operator=(const mpi_session&) = delete;
  ~mpi_session();

 private:
  bool initialised_here_ = false;
  int thread_level_ = MPI_THREAD_SINGLE;
};

// dcuda's own duplicate of a communicator (MPI_COMM_WORLD): collectives on it cannot meet the
// program's own, and its failures return to dcuda (MPI_ERRORS_RETURN, DCUDA_ERROR_MPI) instead
// of aborting the job inside MPI, whatever handler the program gave the original. Empty
// (MPI_COMM_NULL) when default-constructed or moved from.
class mpi_communicator {
 public:
  mpi_communicator() = default;
  explicit mpi_communicator(MPI_Comm original);
  mpi_communicator(mpi_communicator&& other) noexcept;
  mpi_communicator& operator=(mpi_communicator&& other) noexcept;
  ~mpi_communicator();

  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Checks an MPI call; the message carries the call as written and MPI's error text, the code
// DCUDA_ERROR_MPI. Only calls on communicators with MPI_ERRORS_RETURN (dcuda's own) return a
// failure at all; under MPI's default handler the job aborts inside the call.
[[noreturn]] void throw_mpi_error(int code, const char* call);

}  // namespace dcuda::bootstrap

#define DCUDA_MPI_CHECK(call)                                        \
  do {                                                               \
    const int dcuda_mpi_status_ = (call);                            \
    if (dcuda_mpi_status_ != MPI_SUCCESS) {                          \
      ::dcuda::bootstrap::throw_mpi_error(dcuda_mpi_status_, #call); \
    }                                                                \
  } while (0)
