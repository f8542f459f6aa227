// The on-stream ping-pong of host_stream_latency and nvshmem_latency: the host queues every
// message of a repetition on a stream of each of the 2 processes, and the streams play the
// ping-pong by themselves, as a program that drives communication from the host does. The GPUs
// take longer per message than the host takes to queue one (several us against one or two), so
// the streams, not the host, set the pace. The time is process 0's, from CUDA events around its
// round trips; both processes start queueing a repetition together (MPI_Barrier).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "common/cuda_check.h"
#include "common/mpi_world.h"
#include "common/statistics.h"

namespace dcuda_bench {

inline constexpr int stream_round_trips = 100;  // a repetition

// One way in microseconds on process 0 (the median of `repetitions`, with their range), on every
// process; collective. `send(k)` and `wait(k)` queue the k-th message of this process (k counts
// from 1 over the whole call, so that signals set to k grow) on `stream`.
template <typename Send, typename Wait>
figure stream_ping_pong_us(const mpi_world& world, cudaStream_t stream, Send&& send, Wait&& wait) {
  const owned_event start, stop;
  std::vector<unsigned long long> nanoseconds;
  int message = 0;
  for (int repetition = 0; repetition <= repetitions; ++repetition) {  // the first: warm-up
    world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
    if (world.process() == 0) BENCH_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    for (int round = 0; round < stream_round_trips; ++round) {
      ++message;
      if (world.process() == 0) {
        send(message);
        wait(message);
      } else {
        wait(message);
        send(message);
      }
    }
    if (world.process() == 0) BENCH_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (world.process() == 0 && repetition > 0) {
      float milliseconds = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start.get(), stop.get()));
      nanoseconds.push_back(static_cast<unsigned long long>(milliseconds * 1e6));
    }
  }
  std::vector<double> one_way_us;
  for (const unsigned long long ns : nanoseconds) {
    one_way_us.push_back(static_cast<double>(ns) / stream_round_trips / 2 / 1000);
  }
  const figure one_way = summary(one_way_us);  // process 0's; empty elsewhere
  return world.from_process0(one_way);
}

// Milliseconds of each of `repetitions` (after a warm-up) of what `queue()` queues on two streams
// of one process, from CUDA events on `first` around it, both streams drained after each.
template <typename Queue>
std::vector<double> two_stream_repetitions_ms(cudaStream_t first, cudaStream_t second,
                                              Queue&& queue) {
  const owned_event start, stop;
  std::vector<double> milliseconds_each;
  for (int repetition = 0; repetition <= repetitions; ++repetition) {  // the first: warm-up
    BENCH_CUDA_CHECK(cudaEventRecord(start.get(), first));
    queue();
    BENCH_CUDA_CHECK(cudaEventRecord(stop.get(), first));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(first));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(second));
    if (repetition > 0) {
      float milliseconds = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start.get(), stop.get()));
      milliseconds_each.push_back(static_cast<double>(milliseconds));
    }
  }
  return milliseconds_each;
}

// The same ping-pong between two streams of one process, on its GPU (the same-GPU path): `first`
// sends and then waits, `second` waits and then answers; one way in microseconds from CUDA events
// on `first`, the median of `repetitions`, with their range. `send(side, k)` and `wait(side, k)`
// queue the k-th message of stream `side` (0: first, 1: second). No MPI: every process may run
// its own.
template <typename Send, typename Wait>
figure two_stream_ping_pong_us(cudaStream_t first, cudaStream_t second, Send&& send, Wait&& wait) {
  int message = 0;
  std::vector<double> one_way_us = two_stream_repetitions_ms(first, second, [&] {
    for (int round = 0; round < stream_round_trips; ++round) {
      ++message;
      // Each wait queued after what satisfies it: the two streams may share a hardware queue,
      // where a wait queued first would hold up its own answer.
      send(0, message);
      wait(1, message);
      send(1, message);
      wait(0, message);
    }
  });
  for (double& time : one_way_us) time = time * 1e3 / stream_round_trips / 2;
  return summary(one_way_us);
}

inline constexpr int stream_batch_messages = 10000;  // a repetition of the message-rate test

// The message rate of queued operations, as the time per message in microseconds on process 0
// (the median of `repetitions`, with their range), on every process; collective. Process 0 queues
// `messages` sends back to back on `stream` (`send()`), then a wait for one answer
// (`wait_answer()`); process 1 queues a wait for all of them (`wait_batch(count)`), then the
// answer (`answer()`). Timed by CUDA events on process 0's stream around the whole batch.
template <typename Send, typename WaitBatch, typename Answer, typename WaitAnswer>
figure stream_batch_us(const mpi_world& world, cudaStream_t stream, Send&& send,
                       WaitBatch&& wait_batch, Answer&& answer, WaitAnswer&& wait_answer,
                       int messages = stream_batch_messages) {
  const owned_event start, stop;
  std::vector<double> per_message_us;
  for (int repetition = 0; repetition <= repetitions; ++repetition) {  // the first: warm-up
    world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
    if (world.process() == 0) {
      BENCH_CUDA_CHECK(cudaEventRecord(start.get(), stream));
      for (int message = 0; message < messages; ++message) send();
      wait_answer();
      BENCH_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    } else {
      wait_batch(messages);
      answer();
    }
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (world.process() == 0 && repetition > 0) {
      float milliseconds = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start.get(), stop.get()));
      per_message_us.push_back(static_cast<double>(milliseconds) * 1e3 / messages);
    }
  }
  const figure time = summary(per_message_us);  // process 0's; empty elsewhere
  return world.from_process0(time);
}

// The message rate between two streams of one process, as stream_batch_us: `first` queues
// `messages` sends (`send()`) and a wait for one answer (`wait_answer()`), `second` a wait for
// all of them (`wait_batch(count)`) and the answer (`answer()`); timed on `first` from the first
// send to the answer. No MPI.
template <typename Send, typename WaitBatch, typename Answer, typename WaitAnswer>
figure two_stream_batch_us(cudaStream_t first, cudaStream_t second, Send&& send,
                           WaitBatch&& wait_batch, Answer&& answer, WaitAnswer&& wait_answer,
                           int messages = stream_batch_messages) {
  std::vector<double> per_message_us = two_stream_repetitions_ms(first, second, [&] {
    // Each wait queued after what satisfies it, as in two_stream_ping_pong_us.
    for (int message = 0; message < messages; ++message) send();
    wait_batch(messages);
    answer();
    wait_answer();
  });
  for (double& time : per_message_us) time = time * 1e3 / messages;
  return summary(per_message_us);
}

}  // namespace dcuda_bench
