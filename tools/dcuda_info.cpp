// dcuda-info: what dcuda would do on this machine, in this job. Run it alone, or under the
// launcher of your job (mpirun -n 4 dcuda-info, srun dcuda-info) to see each process's GPU, CPUs
// and the path between each pair. It prints what it can without a GPU and exits 0; 2 for a bad
// argument, 1 when a CUDA or MPI call fails.
#include <mpi.h>

#include <cstdio>
#include <optional>
#include <stdexcept>

#include "build_configuration.h"
#include "gpu_report.h"
#include "options.h"
#include "process_report.h"
#include "ranks_report.h"
#include "runtime/error.h"
#include "runtime/host_setup.h"
#include "runtime/settings.h"

namespace {

int process_index() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  int index = 0;
  if (initialised) MPI_Comm_rank(MPI_COMM_WORLD, &index);
  return index;
}

int report(const dcuda::info::options& given) {
  using namespace dcuda;
  const runtime::settings settings =
      runtime::read_settings(given.dcuda_arguments, runtime::dcuda_environment());
  // Joins the job as dcuda_host_init does: MPI only under a launcher.
  std::optional<bootstrap::process_layout> job;
  bootstrap::mpi_communicator world;
  if (runtime::join_if_launched()) {
    world = bootstrap::mpi_communicator(MPI_COMM_WORLD);
    job = bootstrap::discover_layout(world.get());
  }
  const info::visible_gpus gpus = info::find_gpus();
  const info::process_survey survey =
      info::survey_processes(job ? &*job : nullptr, world.get(), gpus, settings);
  if (process_index() != 0) return 0;
  info::print_build_configuration();
  info::print_gpus(gpus);
  info::print_ranks_per_gpu(given, gpus, survey.delivery_agent, settings.max_ranks_per_device);
  info::print_processes(survey);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  dcuda::info::options given;
  try {
    given = dcuda::info::parse_options(argc, argv);
  } catch (const std::invalid_argument& bad) {
    std::fprintf(stderr, "dcuda-info: %s\n%s", bad.what(), dcuda::info::usage);
    return 2;
  }
  if (given.help) {
    std::printf("%s", dcuda::info::usage);
    return 0;
  }
  try {
    return report(given);
  } catch (const std::exception& failure) {
    std::fprintf(stderr, "dcuda-info: error: %s\n", failure.what());
    int initialised = 0;
    MPI_Initialized(&initialised);
    // The other processes may wait in a collective call for this one.
    if (initialised) MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
