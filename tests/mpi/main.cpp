#include "bootstrap/mpi_session.h"
#include "mpi_test_main.h"

int main(int argc, char** argv) {
  dcuda::bootstrap::mpi_session mpi(&argc, &argv);
  return mpi_test::run_collectively(argc, argv);
}
