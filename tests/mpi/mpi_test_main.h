// Tests that run in every process of an mpirun: each case is called by all processes. Process 0
// prints one line per case and the summary "N passed, N failed, N skipped". A case that fails on
// some process prints why and aborts the whole job (MPI_Abort): the other processes may be waiting
// in a collective call of the case that the failed process will never make, so carrying on would
// hang instead of failing. Every process gets the same arguments: `--case NAME` runs one case,
// `--except NAME` (repeatable) all but those, `--list` prints the names (process 0).
#pragma once

#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "test_main.h"

namespace mpi_test {

inline int process_index() {
  int index = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &index);
  return index;
}

inline int process_count() {
  int count = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &count);
  return count;
}

// Runs the cases registered with DCUDA_TEST collectively (those the arguments select). A case
// skips (dcuda_test::skip) in every process alike: it decides from what every process sees the
// same way.
inline int run_collectively(int argc, char** argv) {
  const char* only = nullptr;
  std::vector<std::string> excepted;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list") == 0) {
      if (process_index() == 0) {
        for (const auto& test : dcuda_test::registry()) std::printf("%s\n", test.name);
      }
      return 0;
    }
    if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) only = argv[++i];
    if (std::strcmp(argv[i], "--except") == 0 && i + 1 < argc) excepted.emplace_back(argv[++i]);
  }
  int passed = 0;
  int skipped = 0;
  for (const auto& test : dcuda_test::registry()) {
    if (only != nullptr && std::strcmp(only, test.name) != 0) continue;
    bool is_excepted = false;
    for (const std::string& name : excepted) is_excepted = is_excepted || name == test.name;
    if (is_excepted) continue;
    try {
      test.body();
    } catch (const dcuda_test::skip& reason) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (process_index() == 0) std::printf("SKIP %s: %s\n", test.name, reason.reason.c_str());
      std::fflush(stdout);
      ++skipped;
      continue;
    } catch (const std::exception& e) {
      std::printf("FAIL %s on process %d: %s\n", test.name, process_index(), e.what());
      std::printf("%d processes: %d passed, 1 failed\n", process_count(), passed);
      std::fflush(stdout);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (process_index() == 0) std::printf("PASS %s\n", test.name);
    std::fflush(stdout);
    ++passed;
  }
  if (process_index() == 0) {
    std::printf("%d processes: %d passed, 0 failed, %d skipped\n", process_count(), passed,
                skipped);
  }
  return 0;
}

}  // namespace mpi_test
