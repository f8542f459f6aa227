#include "bootstrap/mpi_session.h"

#include <string>
#include <utility>

#include "runtime/error.h"

namespace dcuda::bootstrap {

void throw_mpi_error(int code, const char* call) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw runtime::error(DCUDA_ERROR_MPI,
                       std::string(call) + " failed: " + std::string(text, length));
}

mpi_session::mpi_session(int* argc, char*** argv) {
  int initialised = 0;
  DCUDA_MPI_CHECK(MPI_Initialized(&initialised));
  if (initialised) {
    DCUDA_MPI_CHECK(MPI_Query_thread(&thread_level_));
  } else {
    DCUDA_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &thread_level_));
    initialised_here_ = true;
    // dcuda owns MPI_COMM_WORLD here: its failures become dcuda errors (DCUDA_ERROR_MPI) instead
    // of aborting the job from inside MPI. (Where the program initialised MPI, its handler
    // stays; dcuda's own communicators return errors either way.)
    DCUDA_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  }
  if (thread_level_ < MPI_THREAD_SERIALIZED) {
    throw runtime::error(
        DCUDA_ERROR_MPI,
        "dcuda_host_init: MPI provides thread level " + std::to_string(thread_level_) +
            "; dcuda needs MPI_THREAD_SERIALIZED or more (initialise MPI with MPI_Init_thread, or "
            "let dcuda initialise it)");
  }
}

mpi_communicator::mpi_communicator(MPI_Comm original) {
  DCUDA_MPI_CHECK(MPI_Comm_dup(original, &comm_));
  DCUDA_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
}

mpi_communicator::mpi_communicator(mpi_communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)) {}

mpi_communicator& mpi_communicator::operator=(mpi_communicator&& other) noexcept {
  if (this != &other) {
    mpi_communicator old(std::move(*this));
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
  }
  return *this;
}

mpi_communicator::~mpi_communicator() {
  if (comm_ == MPI_COMM_NULL) return;
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Comm_free(&comm_);
}

mpi_session::~mpi_session() {
  if (!initialised_here_) return;
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

}  // namespace dcuda::bootstrap
