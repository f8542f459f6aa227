// Faults across processes, each run as its own mpirun job by CTest (cmake/expect_job_failure.cmake
// checks that the job fails within its time limit and names what went wrong), on the peer path
// unless CTest forces the network or host barriers:
//   missing_collective    processes 1.. never reach the world barrier process 0 waits in
//   mismatched_collective process 0 calls dcuda_comm_barrier while the others create a window
//   remote_put_outside    a put to a rank of the other process ends outside its window
//   cached_put_outside    the same after a valid 4-byte put_notify to that rank, so that the bad
//                         one is checked against the route cache (plan_put's hit)
//   cached_source_outside a 4-byte put_notify on that fast path whose source buffer lies outside
//                         the caller's window (the fast path must not read it)
//   forged_ring_record    process 0 writes records no dcuda sender writes into the peer ring of a
//   ring_record_outside   rank of process 1 (a 7-byte payload; 4 bytes past the end of its window):
//                         the target refuses them before anything lands
//   get_through_network   a get from a rank of the other process, which the network path reaches
//                         (DCUDA_FORCE_NETWORK=1): refused, naming the target
//   window_past_allocation a 1 GiB window of DCUDA_COMM_WORLD in a 4096-byte cudaMalloc
//                         allocation (peer path: the exporting host refuses it; network path:
//                         the host whose delivery agent would write into it)
// and, without a kernel, for the stream-ordered operations of dcuda/host_stream.h:
//   stream_put_through_network  process 0 puts on its stream past the end of the last rank's
//                         window, which the network path reaches (DCUDA_FORCE_NETWORK=1): refused
//                         by the sender
//   stream_get_through_network  process 0 gets on its stream from the last rank's window, which
//                         the network path reaches (DCUDA_FORCE_NETWORK=1): refused, naming it
//   mismatched_host_collective  process 0 frees a host window while the others create one
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dcuda/device.cuh"
#include "dcuda/host.h"
#include "dcuda/host_stream.h"

namespace {

enum scenario : int {
  missing_collective,
  mismatched_collective,
  remote_put_outside,
  cached_put_outside,
  cached_source_outside,
  forged_ring_record,
  ring_record_outside,
  window_past_allocation,
  get_through_network
};

// Thread 0 of a rank of process 0: a record the sending side of dcuda never makes, written into
// the ring of world rank `target` (a rank of process 1, reached by the peer path) as a corrupted
// or mismatched peer could, with a ticket taken as a sender takes one.
__device__ void write_forged_record(dcuda_state& gst, int target, dcuda_win win, bool too_wide) {
  using namespace dcuda;
  const device::target_route to = device::route_to(gst, target);
  if (to.path != protocol::route::peer) return;  // the scenario needs the peer path
  const protocol::ring_record record{0x01020304u,
                                     too_wide ? 0u : 62u,  // 62 + 4 > the 64-byte window
                                     1,
                                     static_cast<std::uint8_t>(protocol::window_slot(win)),
                                     static_cast<std::uint8_t>(too_wide ? 100 : 4),
                                     false};
  const device::held_ticket ticket = device::take_ring_ticket(gst, to.ring.slot);
  device::write_ring_record(to.ring.ring, ticket.ticket, record);
}

struct run_data {
  scenario what;
  int process;
  unsigned char* memory;
};

__global__ void fault_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int rank = 0, device_rank = 0, device_size = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &device_size);
  if (run->what == missing_collective) {
    if (run->process == 0) {
      dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
    } else if (device_rank == 0) {
      dcuda_wait_notifications(gst, 9, 1);  // nobody sends it
    }
  } else if (run->what == mismatched_collective) {
    if (run->process == 0) {
      dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
    } else {
      dcuda_win win;
      dcuda_win_create(gst, DCUDA_COMM_WORLD, run->memory + device_rank * 64, 64, &win);
    }
  } else if (run->what == remote_put_outside) {
    dcuda_win win;
    dcuda_win_create(gst, DCUDA_COMM_WORLD, run->memory + device_rank * 64, 64, &win);
    if (rank == 0) {
      dcuda_put_notify(gst, win, device_size, 60, 8, run->memory, 1);  // 60 + 8 > 64
    }
    dcuda_win_free(gst, win);
  } else if (run->what == get_through_network) {
    dcuda_win win;
    dcuda_win_create(gst, DCUDA_COMM_WORLD, run->memory + device_rank * 64, 64, &win);
    if (rank == 0) dcuda_get(gst, win, device_size, 0, 8, run->memory + 1024);
    dcuda_win_free(gst, win);
  } else if (run->what == window_past_allocation) {
    dcuda_win win;
    dcuda_win_create(gst, DCUDA_COMM_WORLD, run->memory + device_rank * 64, 1 << 30, &win);
    dcuda_win_free(gst, win);
  } else if (run->what == forged_ring_record || run->what == ring_record_outside) {
    dcuda_win win;
    dcuda_win_create(gst, DCUDA_COMM_WORLD, run->memory + device_rank * 64, 64, &win);
    if (rank == 0 && threadIdx.x == 0) {
      write_forged_record(gst, device_size, win, run->what == forged_ring_record);
    }
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // the target takes the record in the barrier
    dcuda_win_free(gst, win);
  } else {
    dcuda_win win;
    unsigned char* own = run->memory + device_rank * 64;
    dcuda_win_create(gst, DCUDA_COMM_WORLD, own, 64, &win);
    if (rank == 0) {
      dcuda_put_notify(gst, win, device_size, 0, 4, own, 1);  // valid: the route is cached
      if (run->what == cached_put_outside) {
        dcuda_put_notify(gst, win, device_size, 62, 4, own, 1);  // 62 + 4 > 64
      } else {
        dcuda_put_notify(gst, win, device_size, 0, 4, own + 1024, 1);  // not in the window
      }
    }
    dcuda_win_free(gst, win);
  }
  dcuda_gpu_finish(gst);
}

// The host-stream scenarios; true when `name` is one of them.
bool run_stream_scenario(const std::string& name, dcuda_host_context_handle context, int process) {
  if (name != "stream_put_through_network" && name != "stream_get_through_network" &&
      name != "mismatched_host_collective") {
    return false;
  }
  dcuda_rank_info info{};
  dcuda_host_get_rank_info(context, &info);
  void* memory = nullptr;
  cudaMalloc(&memory, 4096);
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(context, memory, 4096, &win);
  if (name == "stream_put_through_network") {
    if (process == 0) {
      dcuda_put_on_stream(context, win, info.rank_count - 1, 4092, 8, memory, nullptr);
    }
  } else if (name == "stream_get_through_network") {
    if (process == 0) {
      dcuda_get_on_stream(context, win, info.rank_count - 1, 0, 8, memory, nullptr);
    }
  } else if (process == 0) {
    dcuda_host_win_free(context, win);
  } else {
    dcuda_host_win_create(context, memory, 64, &win);
  }
  // Process 0 has ended with the error by now; the others wait for the launcher to end them.
  MPI_Barrier(MPI_COMM_WORLD);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int process = 0, gpus = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  // Processes share GPUs where there are fewer than processes (process i takes GPU i mod GPUs,
  // all on one node): the faults are about what is reported, not about speed.
  int enough = cudaGetDeviceCount(&gpus) == cudaSuccess && gpus >= 1 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!enough) {
    if (process == 0) std::printf("SKIP: multi_gpu_faults: needs a GPU\n");
    MPI_Finalize();
    return 0;
  }
  setenv("DCUDA_DEVICE", std::to_string(process % gpus).c_str(), 1);
  setenv("DCUDA_ALLOW_SHARED_GPUS", "1", 1);
  const std::string name = argc > 1 ? argv[1] : "";
  run_data data{missing_collective, process, nullptr};
  if (name == "mismatched_collective") data.what = mismatched_collective;
  if (name == "remote_put_outside") data.what = remote_put_outside;
  if (name == "get_through_network") data.what = get_through_network;
  if (name == "cached_put_outside") data.what = cached_put_outside;
  if (name == "cached_source_outside") data.what = cached_source_outside;
  if (name == "forged_ring_record") data.what = forged_ring_record;
  if (name == "ring_record_outside") data.what = ring_record_outside;
  if (name == "window_past_allocation") data.what = window_past_allocation;
  dcuda_host_context_handle context = nullptr;
  char cap[] = "--dcuda-ranks-per-device=2";
  char* dcuda_argv[] = {argv[0], cap, nullptr};
  dcuda_host_init(2, dcuda_argv, &context, fault_kernel, 128);
  if (run_stream_scenario(name, context, process)) {
    std::printf("multi_gpu_faults: %s: no error was reported\n", name.c_str());
    MPI_Finalize();
    return 0;
  }
  cudaMalloc(&data.memory, 4096);
  cudaMemset(data.memory, 0, 4096);
  dcuda_host_run(context, &data, sizeof data);
  dcuda_host_finish(context);
  std::printf("multi_gpu_faults: %s: the run ended without an error\n", name.c_str());
  MPI_Finalize();
  return 0;
}
