// Runs an example as a job of several processes and checks that every process says its result
// is right:
//   example_job <processes> <success text> <launcher and program...>
// Without a GPU for every process it prints "SKIP: ..." (CTest reports the test skipped), unless
// DCUDA_TEST_SHARE_GPUS=1: then, with fewer GPUs than processes, every process takes GPU 0
// (DCUDA_DEVICE=0, which the launcher passes on to the processes it starts on this node).
#include <cuda_runtime_api.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: example_job <processes> <success text> <command...>\n");
    return 2;
  }
  const int processes = std::atoi(argv[1]);
  const std::string success = argv[2];
  int gpus = 0;
  const cudaError_t status = cudaGetDeviceCount(&gpus);
  if (status != cudaSuccess) gpus = 0;
  const char* share = std::getenv("DCUDA_TEST_SHARE_GPUS");
  const bool share_gpus = share != nullptr && std::string(share) == "1";
  if (gpus == 0 || (gpus < processes && !share_gpus)) {
    std::printf("SKIP: needs %s: %d GPU(s) (%s)\n", share_gpus ? "a GPU" : "one GPU per process",
                gpus, status == cudaSuccess ? "cudaGetDeviceCount" : cudaGetErrorString(status));
    return 0;
  }
  if (gpus < processes) setenv("DCUDA_DEVICE", "0", 1);

  std::string command;
  for (int i = 3; i < argc; ++i) {
    if (argv[i][0] == '\0') continue;  // an empty launcher flag from CMake
    command += std::string(" '") + argv[i] + "'";
  }
  std::printf("running%s\n", command.c_str());
  FILE* job = popen((command + " 2>&1").c_str(), "r");
  if (job == nullptr) {
    std::perror("popen");
    return 1;
  }
  std::string output;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, job)) > 0;)
    output.append(buffer, n);
  const int ended = pclose(job);
  std::printf("%s", output.c_str());
  int successes = 0;
  for (std::size_t at = output.find(success); at != std::string::npos;
       at = output.find(success, at + 1)) {
    ++successes;
  }
  const bool exited_0 = WIFEXITED(ended) && WEXITSTATUS(ended) == 0;
  if (!exited_0 || successes != processes) {
    std::printf("FAILED: the job %s; %d of %d processes said '%s'\n",
                exited_0 ? "exited 0" : "failed", successes, processes, success.c_str());
    return 1;
  }
  return 0;
}
