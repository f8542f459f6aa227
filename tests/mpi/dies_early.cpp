// A process of the job dies while the others are in the middle of exchanging operations with
// it. The job must end within seconds with a message that names the dead process, not hang.
// Run by CTest through cmake/expect_process_death.cmake.
#include <cstdlib>
#include <vector>

#include "bootstrap/mpi_session.h"
#include "bootstrap/process_layout.h"
#include "transport/mpi_engine.h"

namespace {

class discard : public dcuda::transport::delivery {
 public:
  void* landing_address(const dcuda::transport::remote_operation& op) override {
    buffer_.resize(static_cast<std::size_t>(op.size));
    return buffer_.data();
  }
  void landed(const dcuda::transport::remote_operation&, void*) override {}
  void sent(const dcuda::transport::remote_operation&) override {}

 private:
  std::vector<char> buffer_;
};

}  // namespace

int main(int argc, char** argv) {
  dcuda::bootstrap::mpi_session mpi(&argc, &argv);
  const auto layout = dcuda::bootstrap::exchange_rank_counts(MPI_COMM_WORLD, 1);
  discard sink;
  dcuda::transport::mpi_engine engine(MPI_COMM_WORLD, layout, sink);
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (me == 1) std::_Exit(3);  // dies without a word
  const std::vector<char> payload(4 << 20, 1);
  for (int target = 0; target < layout.world_size(); ++target) {
    if (target == me) continue;
    engine.post({static_cast<int>(dcuda::transport::operation_kind::put_notify), me, target, 0, 0,
                 static_cast<std::int64_t>(payload.size()), 1, 1},
                payload.data());
  }
  engine.quiesce();  // never completes: process 1 is gone
  return 0;
}
