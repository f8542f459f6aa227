#include "particles_app.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_process.h"
#include "particles_reference.h"

namespace particles {

app_options parse_options(int argc, char** argv, const char* program) {
  return app_options(
      argc, argv, program,
      case_study_options(
          {{"width", 416, "width of the box (x)"},
           {"segments", 416, "segments (y, one cutoff high) per GPU; the box has segments * GPUs"},
           {"particles", 410600, "particles per GPU; the box has particles * GPUs"},
           {"capacity", 0, "particle slots per segment (0: three times the mean count)"}},
          {{"threads", 512, "baselines: threads per block (one block per segment)"},
           {"blocks", 0,
            "baselines: 0 = a block per segment; N = N blocks, each owning a run of segments as "
            "a dcuda rank does (an experiment)"},
           {"phases", 0, "dcuda: 1 prints where the ranks' time goes (rank_phase_clock.cuh)"}}));
}

run_setup setup_from(const app_options& options) {
  run_setup setup;
  setup.width = options.get_int("width");
  setup.segments = options.get_int("segments");
  setup.particles = options.get("particles");
  setup.iterations = options.get_int("iterations");
  setup.warmup = options.get_int("warmup");
  setup.check = options.get("check") != 0;
  setup.seed = static_cast<std::uint64_t>(options.get("seed"));
  if (setup.width < 1 || setup.segments < 1 || setup.particles < 0 || setup.iterations < 0 ||
      setup.warmup < 0 || options.get("capacity") < 0)
    throw std::invalid_argument(
        "width and segments must be at least 1, particles, capacity, iterations and warmup at "
        "least 0 (" +
        options.summary() + ")");
  const std::int64_t mean = (setup.particles + setup.segments - 1) / setup.segments;
  const std::int64_t capacity =
      options.get("capacity") > 0 ? options.get("capacity") : std::max<std::int64_t>(3 * mean, 16);
  if (capacity > INT_MAX)
    throw std::invalid_argument("a capacity of " + std::to_string(capacity) +
                                " particles per segment does not fit an int");
  setup.capacity = static_cast<int>(capacity);
  return setup;
}

device_particles::device_particles(const run_setup& setup, int process, int processes)
    : layout(setup.layout()), memory(layout.bytes()), error(1) {
  load_input(setup, process, processes);
}

void device_particles::load_input(const run_setup& setup, int process, int processes) const {
  memory.clear();
  error.clear();
  const box whole = setup.whole(processes);
  const segment_lists own =
      into_segments(initial_particles(whole, setup.particles * processes, setup.seed), whole,
                    process * setup.segments, setup.segments);
  // The current store's counts and slots, ghosts empty, as one image of its part of memory.
  std::vector<unsigned char> image(layout.store_bytes(), 0);
  const segment_store host = layout.store(image.data(), current_store);
  for (int s = 0; s < setup.segments; ++s) {
    const auto& list = own[static_cast<std::size_t>(s)];
    if (list.size() > static_cast<std::size_t>(setup.capacity))
      throw std::runtime_error("at the start, " + describe({static_cast<int>(error_kind::overflow),
                                                            process * setup.segments + s,
                                                            static_cast<long long>(list.size())},
                                                           setup.capacity));
    host.count(s) = static_cast<int>(list.size());
    std::copy(list.begin(), list.end(), host.slot(s));
  }
  APP_CUDA(cudaMemcpy(memory.get() + layout.count_offset(current_store, -1), image.data(),
                      image.size(), cudaMemcpyHostToDevice));
  APP_CUDA(cudaDeviceSynchronize());  // before a kernel on a stream of its own reads them
}

namespace {

// This process's particles (its own segments of the current store), from device memory.
std::vector<particle> own_particles(const device_particles& state) {
  const store_layout& layout = state.layout;
  std::vector<unsigned char> image(layout.store_bytes());
  APP_CUDA(cudaMemcpy(image.data(), state.memory.get() + layout.count_offset(current_store, -1),
                      image.size(), cudaMemcpyDeviceToHost));
  const segment_store host = layout.store(image.data(), current_store);
  std::vector<particle> own;
  for (int s = 0; s < layout.segments; ++s)
    own.insert(own.end(), host.slot(s), host.slot(s) + host.count(s));
  return own;
}

// Collective: every process's particles compared on process 0 with the reference after warmup +
// iterations iterations; the largest deviation on every process (the largest double when an id
// is missing or doubled, which process 0 reports on standard error).
double deviation_from_reference(const run_setup& setup, const std::vector<particle>& own,
                                int process, int processes) {
  const std::size_t own_bytes = own.size() * sizeof(particle);
  if (own_bytes > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument(
        "the result check gathers at most 2^31 bytes per GPU; use --check 0");
  int bytes = static_cast<int>(own_bytes);
  std::vector<int> counts(static_cast<std::size_t>(processes)), offsets(counts.size());
  APP_MPI(MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
  long long total = 0;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    offsets[p] = static_cast<int>(total);
    total += counts[p];
  }
  if (process == 0 && total > INT_MAX)
    throw std::invalid_argument("the result check gathers at most 2^31 bytes; use --check 0");
  std::vector<particle> gathered(process == 0 ? static_cast<std::size_t>(total) / sizeof(particle)
                                              : 0);
  APP_MPI(MPI_Gatherv(own.data(), bytes, MPI_BYTE, gathered.data(), counts.data(), offsets.data(),
                      MPI_BYTE, 0, MPI_COMM_WORLD));
  double deviation = 0;
  if (process == 0) {
    const box whole = setup.whole(processes);
    const comparison compared =
        compare_by_id(reference_result(whole, setup.particles * processes, setup.seed,
                                       setup.warmup + setup.iterations),
                      gathered);
    deviation = compared.max_deviation;
    if (!compared.problem.empty()) {
      std::fprintf(stderr, "particles: check: %s\n", compared.problem.c_str());
      deviation = std::numeric_limits<double>::max();
    }
  }
  APP_MPI(MPI_Bcast(&deviation, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  return deviation;
}

}  // namespace

int check_and_report(const app_options& options, const run_setup& setup, const run_figures& run,
                     const device_particles& state) {
  run_error error{};
  APP_CUDA(cudaMemcpy(&error, state.error.get(), sizeof(error), cudaMemcpyDeviceToHost));
  if (error.kind != static_cast<int>(error_kind::none))
    throw std::runtime_error(describe(error, setup.capacity));
  double deviation = 0;
  if (setup.check)
    deviation = deviation_from_reference(setup, own_particles(state), run.process, run.processes);
  return report_run("particles", options, setup.iterations, run, setup.check, deviation, tolerance,
                    " capacity_used=" + std::to_string(setup.capacity));
}

}  // namespace particles
