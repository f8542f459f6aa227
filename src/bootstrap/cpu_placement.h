// Where this process may run, for DCUDA_VERBOSE. The host proxy is a thread that spins (the
// network path's latency, runtime/polling_thread.h); a launcher that binds each process to one
// CPU (Open MPI binds to a core by default with 2 processes) makes it share that CPU with the
// application's threads, which costs the network path about 0.3 us per operation on the
// H200s (bench/results/h200x2/experiments/network-placement).
#pragma once

#include <string>
#include <vector>

namespace dcuda::bootstrap {

// The CPUs this process may run on, ascending (empty where the system does not say).
std::vector<int> allowed_cpus();

// "0-3,8,10-11": ascending CPU numbers as ranges.
std::string cpu_list_text(const std::vector<int>& ascending_cpus);

// One line for DCUDA_VERBOSE: the CPUs of process `process_index`, and a hint when it has only one.
std::string describe_cpu_placement(int process_index, const std::vector<int>& cpus);

}  // namespace dcuda::bootstrap
