// Reference of the network path: MPI between the 2 processes of a benchmark, OSU style (Open MPI
// 4.1.6, host buffers, one node: 0.44 / 1.0 / 5.2 us one way for 4 B /
// 1 KiB / 16 KiB). Host code.
//
//   latency    ping-pong of `size`-byte messages (MPI_Send / MPI_Recv); one way = round trip / 2
//   bandwidth  process 0 posts a window of MPI_Isend of `size` bytes, process 1 the matching
//              MPI_Irecv, then process 1 answers with a 4-byte message; payload GB/s (1e9 B/s)
//
// Process 0 times with MPI_Wtime; every figure is the median of 7 repetitions after untimed
// warm-up rounds, returned on both processes. The generic forms take what one message costs
// besides MPI (network_engine stages device buffers through pinned host memory with them).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/statistics.h"

namespace dcuda_bench {

// Page-aligned host memory, touched (so that page faults are not timed), freed with the object.
class host_bytes {
 public:
  explicit host_bytes(std::size_t bytes) : bytes_(bytes) {
    constexpr std::size_t page = 4096;
    const std::size_t rounded = std::max<std::size_t>(page, (bytes + page - 1) / page * page);
    data_ = static_cast<unsigned char*>(std::aligned_alloc(page, rounded));
    if (data_ == nullptr) std::abort();
    std::memset(data_, 0, rounded);
  }
  ~host_bytes() { std::free(data_); }
  host_bytes(const host_bytes&) = delete;
  host_bytes& operator=(const host_bytes&) = delete;

  unsigned char* get() const { return data_; }
  std::size_t size() const { return bytes_; }

 private:
  unsigned char* data_ = nullptr;
  std::size_t bytes_;
};

// The bytes a process sends: a pattern of the sender and the offset, never 0 (as payload.cuh).
inline unsigned char host_payload_byte(int sender, std::size_t offset) {
  return static_cast<unsigned char>(
      (offset * 131u + static_cast<std::size_t>(sender) * 71u) % 251u + 1u);
}
inline void fill_host_payload(unsigned char* buffer, std::size_t bytes, int sender) {
  for (std::size_t i = 0; i < bytes; ++i) buffer[i] = host_payload_byte(sender, i);
}
inline bool host_holds_payload(const unsigned char* buffer, std::size_t bytes, int sender) {
  for (std::size_t i = 0; i < bytes; ++i) {
    if (buffer[i] != host_payload_byte(sender, i)) return false;
  }
  return true;
}

struct mpi_result {
  double value;       // us one way, or GB/s
  bool data_arrived;  // every receiver found the sender's bytes
};

// Round trips per repetition: 10000 for small messages, fewer for large ones (a repetition moves
// at most ~64 MiB each way), at least 20.
inline int mpi_round_trips_for(std::size_t size) {
  const std::size_t capped = size == 0 ? 10000 : 64 * MiB / size;
  return static_cast<int>(std::clamp<std::size_t>(capped, 20, 10000));
}
inline int mpi_warmup_for(int round_trips) {
  return std::max(round_trips / 10, 5);
}

// Ping-pong between the 2 processes of world.comm(): process 0 calls send() then receive(),
// process 1 receive() then send(). Median one-way latency in us, on both processes.
template <typename Send, typename Receive>
double mpi_ping_pong_us(const mpi_world& world, int warmup, int round_trips, Send&& send,
                        Receive&& receive) {
  const bool first = world.process() == 0;
  const auto round_trip = [&] {
    if (first) {
      send();
      receive();
    } else {
      receive();
      send();
    }
  };
  for (int i = 0; i < warmup; ++i) round_trip();
  std::vector<double> one_way_us;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    const double start = MPI_Wtime();
    for (int i = 0; i < round_trips; ++i) round_trip();
    one_way_us.push_back((MPI_Wtime() - start) / round_trips / 2 * 1e6);
  }
  return world.from_process0(median(one_way_us));
}

// MPI latency with host buffers: `size` bytes each way (0 allowed).
inline mpi_result mpi_host_latency(const mpi_world& world, std::size_t size) {
  host_bytes send_buffer(size);
  host_bytes receive_buffer(size);
  fill_host_payload(send_buffer.get(), size, world.process());
  const int other = 1 - world.process();
  const int count = static_cast<int>(size);
  const auto send = [&] {
    world.check(MPI_Send(send_buffer.get(), count, MPI_BYTE, other, 1, world.comm()), "MPI_Send");
  };
  const auto receive = [&] {
    world.check(
        MPI_Recv(receive_buffer.get(), count, MPI_BYTE, other, 1, world.comm(), MPI_STATUS_IGNORE),
        "MPI_Recv");
  };
  const int round_trips = mpi_round_trips_for(size);
  const double us =
      mpi_ping_pong_us(world, mpi_warmup_for(round_trips), round_trips, send, receive);
  const bool wrong = !host_holds_payload(receive_buffer.get(), size, other);
  return {us, !world.any(wrong)};
}

// How a bandwidth measurement of `size`-byte messages is made: a window of messages from
// distinct buffers (at most 64 messages, at most 64 MiB), `loops` windows per repetition
// (~256 MiB, 5 to 100 windows).
struct mpi_stream_plan {
  int window;
  int loops;
  int warmup_loops;
};
inline mpi_stream_plan mpi_stream_plan_for(std::size_t size) {
  const std::size_t bytes = std::max<std::size_t>(size, 1);
  mpi_stream_plan plan{};
  plan.window = static_cast<int>(std::clamp<std::size_t>(64 * MiB / bytes, 2, 64));
  plan.loops = static_cast<int>(
      std::clamp<std::size_t>(256 * MiB / (bytes * static_cast<std::size_t>(plan.window)), 5, 100));
  plan.warmup_loops = std::max(1, plan.loops / 10);
  return plan;
}

// Streaming from process 0 to process 1: send_window() (process 0) sends one window and returns
// when its sends are complete; receive_window() (process 1) receives one window and returns when
// the data is where it belongs. After each window process 1 answers with 4 bytes. Median payload
// GB/s measured by process 0, on both processes.
template <typename SendWindow, typename ReceiveWindow>
double mpi_stream_gigabytes_per_second(const mpi_world& world, std::size_t size,
                                       const mpi_stream_plan& plan, SendWindow&& send_window,
                                       ReceiveWindow&& receive_window) {
  const bool sender = world.process() == 0;
  int answer = 0;
  const auto loop = [&] {
    if (sender) {
      send_window();
      world.check(MPI_Recv(&answer, 1, MPI_INT, 1, 2, world.comm(), MPI_STATUS_IGNORE), "MPI_Recv");
    } else {
      receive_window();
      world.check(MPI_Send(&answer, 1, MPI_INT, 0, 2, world.comm()), "MPI_Send");
    }
  };
  for (int i = 0; i < plan.warmup_loops; ++i) loop();
  std::vector<double> rates;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    const double start = MPI_Wtime();
    for (int i = 0; i < plan.loops; ++i) loop();
    const double seconds = MPI_Wtime() - start;
    rates.push_back(static_cast<double>(size) * plan.window * plan.loops / seconds / 1e9);
  }
  return world.from_process0(median(rates));
}

// MPI bandwidth with host buffers, process 0 -> process 1.
inline mpi_result mpi_host_bandwidth(const mpi_world& world, std::size_t size) {
  const mpi_stream_plan plan = mpi_stream_plan_for(size);
  const std::size_t area = size * static_cast<std::size_t>(plan.window);
  host_bytes buffer(area);  // process 0: the sources; process 1: the destinations
  if (world.process() == 0) {
    for (int i = 0; i < plan.window; ++i) fill_host_payload(buffer.get() + i * size, size, 0);
  }
  std::vector<MPI_Request> requests(static_cast<std::size_t>(plan.window));
  const int count = static_cast<int>(size);
  const auto send_window = [&] {
    for (int i = 0; i < plan.window; ++i) {
      world.check(MPI_Isend(buffer.get() + i * size, count, MPI_BYTE, 1, 1, world.comm(),
                            &requests[static_cast<std::size_t>(i)]),
                  "MPI_Isend");
    }
    world.check(MPI_Waitall(plan.window, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  };
  const auto receive_window = [&] {
    for (int i = 0; i < plan.window; ++i) {
      world.check(MPI_Irecv(buffer.get() + i * size, count, MPI_BYTE, 0, 1, world.comm(),
                            &requests[static_cast<std::size_t>(i)]),
                  "MPI_Irecv");
    }
    world.check(MPI_Waitall(plan.window, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  };
  const double rate =
      mpi_stream_gigabytes_per_second(world, size, plan, send_window, receive_window);
  bool wrong = false;
  if (world.process() == 1) {
    for (int i = 0; i < plan.window; ++i) {
      wrong = wrong || !host_holds_payload(buffer.get() + i * size, size, 0);
    }
  }
  return {rate, !world.any(wrong)};
}

}  // namespace dcuda_bench
