#include "bootstrap/cpu_placement.h"

#include <sched.h>

namespace dcuda::bootstrap {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

std::string cpu_list_text(const std::vector<int>& ascending_cpus) {
  std::string text;
  for (std::size_t i = 0; i < ascending_cpus.size();) {
    std::size_t last = i;
    while (last + 1 < ascending_cpus.size() &&
           ascending_cpus[last + 1] == ascending_cpus[last] + 1) {
      ++last;
    }
    if (!text.empty()) text += ',';
    text += std::to_string(ascending_cpus[i]);
    if (last > i) text += '-' + std::to_string(ascending_cpus[last]);
    i = last + 1;
  }
  return text;
}

std::string describe_cpu_placement(int process_index, const std::vector<int>& cpus) {
  std::string line = "dcuda: process " + std::to_string(process_index);
  if (cpus.empty()) return line + " runs on CPUs the system does not name\n";
  line += " runs on CPU" + std::string(cpus.size() > 1 ? "s " : " ") + cpu_list_text(cpus);
  if (cpus.size() == 1) {
    line +=
        ": its host proxy thread spins there beside the application's threads, which slows "
        "the network path; give each process several CPUs (mpirun --bind-to none, or "
        "--map-by slot:PE=2)";
  }
  return line + "\n";
}

}  // namespace dcuda::bootstrap
