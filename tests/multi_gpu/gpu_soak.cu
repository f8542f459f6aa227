// A soak of dcuda across GPUs and processes, run under mpirun with one process per GPU: bounded
// random traffic between every pair of ranks, every byte and every notification checked.
//
//   gpu_soak [ROUNDS] [SEED] [--region=BYTES] [--dcuda-SETTING=VALUE ...]
//
// Every rank owns one window over DCUDA_COMM_WORLD: one region per rank of the world, into which
// only that source rank writes, then a staging area for its own outgoing data. In round r, rank s
// draws from (SEED, r, s) a target (any rank: itself, its GPU, a peer GPU, another process), a
// size n log-uniform in 1 B .. the region, a small size m of at most 64 B, a tag and up to three
// pure notifications to random ranks and tags. It puts n bytes of pattern A into its region of the
// target, then put_notifies m bytes of pattern B over the start of the same region, then notifies.
// Every target draws the same choices for every source, waits for exactly the notifications it must
// get, finds no more, and checks [0, m) against B (a put_notify that overtook its put would leave
// A there), [m, n) against A and a guard past n against zero; it then clears what it checked, so
// that a stray write of any later round shows. A barrier of DCUDA_COMM_WORLD ends every round.
// After the last round every notification has landed, so any one left unconsumed is one too many.
//
// Exit status 0 when every byte and notification was right, 1 on any failure (the first one is
// printed: round, source, target, offset, expected and found byte), 2 for a bad argument. Without
// a GPU it prints "SKIP: multi_gpu_soak: ..." and exits 0. Processes share GPUs where a node has
// fewer GPUs than processes, or with DCUDA_TEST_SHARE_GPUS=1.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dcuda/device.cuh"
#include "dcuda/host.h"

namespace {

constexpr int threads_per_rank = 256;
constexpr int tags = 256;
constexpr int small_put_limit = 64;  // m, and the staging area of pattern B
constexpr int max_extra_notifies = 3;
constexpr int guard_bytes = 64;  // checked for zero past every put
// Tags tested for a notification too many per round, besides one tag that expected none.
constexpr int tags_tested_per_round = 4;
// A counter that a fault has sent far off must not keep the final check spinning.
constexpr int leftover_limit = 1 << 16;
constexpr int default_region = 1 << 20;
constexpr int default_rounds = 200;
constexpr int window_alignment = 256;

// ---- Choices every rank can recompute for every other: a counter-based hash, no state ----

__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

constexpr std::uint64_t golden_gamma = 0x9e3779b97f4a7c15ULL;

enum key_stream : unsigned { plan_stream = 0, put_stream = 1, put_notify_stream = 2 };

__host__ __device__ inline std::uint64_t key_of(std::uint64_t seed, int round, int source,
                                                key_stream stream) {
  const std::uint64_t rank_and_stream =
      (static_cast<std::uint64_t>(static_cast<unsigned>(source)) << 2) | stream;
  return mix64(mix64(mix64(seed) ^ static_cast<unsigned>(round)) ^ rank_and_stream);
}

struct choice_stream {
  std::uint64_t state;
  __host__ __device__ std::uint64_t next() { return mix64(state += golden_gamma); }
  // Uniform in 0..bound-1 (bound >= 1).
  __host__ __device__ int below(int bound) {
    const std::uint64_t high = next() >> 32;
    return static_cast<int>((high * static_cast<std::uint64_t>(bound)) >> 32);
  }
};

struct round_plan {
  int target;
  int size;        // bytes of the put (pattern A)
  int small_size;  // bytes of the put_notify over the start of the same region (pattern B)
  int tag;
  int extra_notifies;
  int extra_target[max_extra_notifies];
  int extra_tag[max_extra_notifies];
};

__host__ __device__ inline int floor_log2(int value) {
  int log = 0;
  while ((value >> (log + 1)) != 0) ++log;
  return log;
}

// The first choice of a plan alone: which rank a source writes to.
__host__ __device__ inline int target_of(std::uint64_t seed, int round, int source, int world) {
  choice_stream draw{key_of(seed, round, source, plan_stream)};
  return draw.below(world);
}

// Sizes: an octave 2^k .. 2^(k+1)-1 chosen uniformly among those that start inside the region,
// then a size uniform within it, so that 1 B and the whole region come up as often as 4 KiB.
__host__ __device__ inline round_plan plan_round(std::uint64_t seed, int round, int source,
                                                 int world, int region) {
  choice_stream draw{key_of(seed, round, source, plan_stream)};
  round_plan plan{};
  plan.target = draw.below(world);  // as target_of draws it
  const int octave = draw.below(floor_log2(region) + 1);
  const int low = 1 << octave;
  const int high = region - low < low ? region : 2 * low - 1;
  plan.size = low + draw.below(high - low + 1);
  plan.small_size = 1 + draw.below(plan.size < small_put_limit ? plan.size : small_put_limit);
  plan.tag = draw.below(tags);
  plan.extra_notifies = draw.below(max_extra_notifies + 1);
  for (int k = 0; k < max_extra_notifies; ++k) {
    plan.extra_target[k] = draw.below(world);
    plan.extra_tag[k] = draw.below(tags);
  }
  return plan;
}

__host__ __device__ inline std::uint64_t pattern_word(std::uint64_t key, int word) {
  return mix64(key + static_cast<std::uint64_t>(word) * golden_gamma);
}

// ---- What the kernel reports ----

enum tally_field : int {
  put_count,
  put_notify_count,
  notify_count,
  barrier_count,  // of DCUDA_COMM_WORLD, counted once (by world rank 0)
  put_byte_count,
  put_notify_byte_count,
  expected_count,  // notifications
  received_count,  // notifications consumed by the waits, and those found beyond them
  unexpected_count,
  checked_byte_count,  // of the puts: the put_notifies lie within them
  corrupted_byte_count,
  tally_fields
};

struct rank_tally {
  unsigned long long count[tally_fields];
};

enum failure_kind : int { corrupted_byte = 1, unexpected_notification = 2 };

// The first failure on this GPU; for an unexpected notification, `offset` is unused and
// `expected` is how many notifications of `tag` the target expected that round.
struct soak_failure {
  int claimed;
  int kind;
  int round;
  int source;
  int target;
  int tag;
  int offset;
  int size;
  int small_size;
  int expected;
  int got;
};

struct soak_setup {
  unsigned char* windows;  // this process's ranks' windows, window_stride bytes apart
  long long window_stride;
  int window_bytes;
  int region;
  int rounds;
  std::uint64_t seed;
  rank_tally* tallies;  // one per rank of this process
  soak_failure* failure;
};

__device__ void record_failure(soak_failure* record, const soak_failure& what) {
  if (atomicCAS(&record->claimed, 0, 1) != 0) return;
  record->kind = what.kind;
  record->round = what.round;
  record->source = what.source;
  record->target = what.target;
  record->tag = what.tag;
  record->offset = what.offset;
  record->size = what.size;
  record->small_size = what.small_size;
  record->expected = what.expected;
  record->got = what.got;
}

// Writes whole words: up to 7 bytes past `bytes`, which the staging areas leave room for.
__device__ void fill_pattern(unsigned char* buffer, int bytes, std::uint64_t key) {
  auto* words = reinterpret_cast<std::uint64_t*>(buffer);
  const int word_count = (bytes + 7) / 8;
  for (int w = threadIdx.x; w < word_count; w += blockDim.x) words[w] = pattern_word(key, w);
}

// What word `w` of a region must hold after the round: B below m, A below n, zero past n.
__host__ __device__ inline std::uint64_t expected_word(int w, const round_plan& plan,
                                                       std::uint64_t key_a, std::uint64_t key_b) {
  const int first = 8 * w;
  if (first >= plan.small_size && first + 8 <= plan.size) return pattern_word(key_a, w);
  const std::uint64_t a = first < plan.size ? pattern_word(key_a, w) : 0;
  const std::uint64_t b = first < plan.small_size ? pattern_word(key_b, w) : 0;
  std::uint64_t word = 0;
  for (int j = 0; j < 8; ++j) {
    const int i = first + j;
    const std::uint64_t from = i < plan.small_size ? b : i < plan.size ? a : 0;
    word |= from & (0xffULL << (8 * j));
  }
  return word;
}

// All threads of the rank: checks source's region of this round and clears it. Returns the
// corrupted bytes this thread found.
__device__ unsigned check_and_clear_region(const soak_setup& setup, unsigned char* region,
                                           const round_plan& plan, int round, int source, int me) {
  const std::uint64_t key_a = key_of(setup.seed, round, source, put_stream);
  const std::uint64_t key_b = key_of(setup.seed, round, source, put_notify_stream);
  const int checked_bytes =
      plan.size + guard_bytes < setup.region ? plan.size + guard_bytes : setup.region;
  const int word_count = (checked_bytes + 7) / 8;
  auto* words = reinterpret_cast<std::uint64_t*>(region);
  unsigned wrong = 0;
  for (int w = threadIdx.x; w < word_count; w += blockDim.x) {
    const std::uint64_t got = words[w];
    const std::uint64_t expected = expected_word(w, plan, key_a, key_b);
    if (got != expected) {
      const std::uint64_t differ = got ^ expected;
      int first_byte = -1;
      for (int j = 7; j >= 0; --j) {
        if (((differ >> (8 * j)) & 0xffULL) != 0) {
          ++wrong;
          first_byte = j;
        }
      }
      soak_failure what{};
      what.kind = corrupted_byte;
      what.round = round;
      what.source = source;
      what.target = me;
      what.tag = plan.tag;
      what.offset = 8 * w + first_byte;
      what.size = plan.size;
      what.small_size = plan.small_size;
      what.expected = static_cast<int>((expected >> (8 * first_byte)) & 0xffULL);
      what.got = static_cast<int>((got >> (8 * first_byte)) & 0xffULL);
      record_failure(setup.failure, what);
    }
    words[w] = 0;  // the guard too: a stray byte is counted once
  }
  return wrong;
}

// Thread 0 of a rank: a notification beyond those expected (`expected` of `tag` this round).
__device__ void count_unexpected(const soak_setup& setup, int round, int me, int tag, int expected,
                                 unsigned long long* tally) {
  tally[received_count] += 1;
  tally[unexpected_count] += 1;
  record_failure(setup.failure, soak_failure{0, unexpected_notification, round, -1, me, tag, 0, 0,
                                             0, expected, expected + 1});
}

__device__ void send_round(dcuda_state& gst, dcuda_win win, const soak_setup& setup, int round,
                           int me, int world, unsigned char* staging_a, unsigned char* staging_b,
                           unsigned long long* tally) {
  const round_plan plan = plan_round(setup.seed, round, me, world, setup.region);
  fill_pattern(staging_a, plan.size, key_of(setup.seed, round, me, put_stream));
  fill_pattern(staging_b, plan.small_size, key_of(setup.seed, round, me, put_notify_stream));
  const int my_region = me * setup.region;
  dcuda_put(gst, win, plan.target, my_region, plan.size, staging_a);
  dcuda_put_notify(gst, win, plan.target, my_region, plan.small_size, staging_b, plan.tag);
  for (int k = 0; k < plan.extra_notifies; ++k) {
    dcuda_notify(gst, plan.extra_target[k], DCUDA_COMM_WORLD, plan.extra_tag[k]);
  }
  // A large put through the network reads staging_a later; it is refilled next round.
  dcuda_win_flush(gst, win);
  if (threadIdx.x == 0) {
    tally[put_count] += 1;
    tally[put_notify_count] += 1;
    tally[notify_count] += static_cast<unsigned>(plan.extra_notifies);
    tally[put_byte_count] += static_cast<unsigned>(plan.size);
    tally[put_notify_byte_count] += static_cast<unsigned>(plan.small_size);
  }
}

// Waits for exactly the notifications every source's plan sends this rank this round.
__device__ void take_notifications(dcuda_state& gst, const soak_setup& setup, int round, int me,
                                   int world, int* expected, unsigned long long* tally) {
  for (int tag = threadIdx.x; tag < tags; tag += blockDim.x) expected[tag] = 0;
  __syncthreads();
  for (int source = threadIdx.x; source < world; source += blockDim.x) {
    const round_plan theirs = plan_round(setup.seed, round, source, world, setup.region);
    if (theirs.target == me) atomicAdd(&expected[theirs.tag], 1);
    for (int k = 0; k < theirs.extra_notifies; ++k) {
      if (theirs.extra_target[k] == me) atomicAdd(&expected[theirs.extra_tag[k]], 1);
    }
  }
  __syncthreads();
  // No source sends its next round's notifications before this rank reaches the barrier, so a
  // notification found beyond the expected ones is a duplicate or a stray.
  const int quiet_tag = (round * 97 + me) % tags;
  int tested = 0;
  for (int tag = 0; tag < tags; ++tag) {
    const int count = expected[tag];
    if (count == 0) continue;
    dcuda_wait_notifications(gst, tag, count);
    if (threadIdx.x == 0) {
      tally[expected_count] += static_cast<unsigned>(count);
      tally[received_count] += static_cast<unsigned>(count);
    }
    const bool test_this_tag = tested < tags_tested_per_round || tag == quiet_tag;
    if (test_this_tag && dcuda_test_notifications(gst, tag, 1) == 1 && threadIdx.x == 0) {
      count_unexpected(setup, round, me, tag, count, tally);
    }
    tested += test_this_tag ? 1 : 0;
  }
  if (expected[quiet_tag] == 0 && dcuda_test_notifications(gst, quiet_tag, 1) == 1 &&
      threadIdx.x == 0) {
    count_unexpected(setup, round, me, quiet_tag, 0, tally);
  }
}

// Checks and clears every region written into this rank's window this round. Each thread draws
// the target of one source at a time; only the sources that chose this rank are drawn in full.
// Returns the corrupted bytes this thread found.
__device__ unsigned check_round(const soak_setup& setup, int round, int me, int world,
                                unsigned char* window, unsigned* hit_mask,
                                unsigned long long* tally) {
  constexpr int warp = 32;
  unsigned wrong = 0;
  for (int base = 0; base < world; base += blockDim.x) {
    const int source = base + static_cast<int>(threadIdx.x);
    const bool hit = source < world && target_of(setup.seed, round, source, world) == me;
    const unsigned hits = __ballot_sync(0xffffffffu, hit);
    if (threadIdx.x % warp == 0) hit_mask[threadIdx.x / warp] = hits;
    __syncthreads();
    for (int w = 0; w < static_cast<int>(blockDim.x) / warp; ++w) {
      for (unsigned left = hit_mask[w]; left != 0; left &= left - 1) {
        const int sender = base + w * warp + __ffs(static_cast<int>(left)) - 1;
        const round_plan theirs = plan_round(setup.seed, round, sender, world, setup.region);
        wrong +=
            check_and_clear_region(setup, window + static_cast<long long>(sender) * setup.region,
                                   theirs, round, sender, me);
        if (threadIdx.x == 0) tally[checked_byte_count] += static_cast<unsigned>(theirs.size);
      }
    }
    __syncthreads();  // before hit_mask is written again
  }
  return wrong;
}

// One rank per multiprocessor leaves the compiler registers enough not to spill; the soak runs few
// ranks per GPU.
__global__ void __launch_bounds__(threads_per_rank, 1) soak_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  __shared__ int expected[tags];  // notifications of each tag this rank gets this round
  __shared__ unsigned hit_mask[threads_per_rank / 32];
  dcuda_gpu_init(dcuda, gst);
  soak_setup* setup = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&setup));
  int me = 0, world = 0, device_rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &me);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &world);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  unsigned char* window = setup->windows + device_rank * setup->window_stride;
  unsigned char* staging_a = window + static_cast<long long>(world) * setup->region;
  unsigned char* staging_b = staging_a + setup->region;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, setup->window_bytes, &win);

  unsigned long long tally[tally_fields] = {};  // thread 0's
  unsigned wrong = 0;                           // every thread's
  for (int round = 0; round < setup->rounds; ++round) {
    send_round(gst, win, *setup, round, me, world, staging_a, staging_b, tally);
    take_notifications(gst, *setup, round, me, world, expected, tally);
    wrong += check_round(*setup, round, me, world, window, hit_mask, tally);
    // Every region is written again only after this barrier, and cleared before it.
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
    if (threadIdx.x == 0 && me == 0) tally[barrier_count] += 1;
  }

  // The barrier has landed every notification sent: whatever is left was never expected.
  for (int tag = 0; tag < tags; ++tag) {
    for (int extra = 0; extra < leftover_limit && dcuda_test_notifications(gst, tag, 1) == 1;
         ++extra) {
      if (threadIdx.x == 0) count_unexpected(*setup, setup->rounds, me, tag, 0, tally);
    }
  }
  if (threadIdx.x == 0) {
    rank_tally& mine = setup->tallies[device_rank];
    for (int field = 0; field < tally_fields; ++field) mine.count[field] = tally[field];
  }
  __syncthreads();
  if (wrong != 0) atomicAdd(&setup->tallies[device_rank].count[corrupted_byte_count], wrong);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

// ---- Host ----

struct options {
  int rounds = default_rounds;
  std::uint64_t seed = 1;
  int region = default_region;
  bool help = false;
  std::vector<std::string> dcuda_arguments;
};

const char usage[] =
    "usage: gpu_soak [ROUNDS] [SEED] [--region=BYTES] [--dcuda-SETTING=VALUE ...]\n"
    "  ROUNDS  rounds of random traffic (default 200)\n"
    "  SEED    seed of every choice (default 1); the same seed repeats the same traffic\n"
    "  --region=BYTES  bytes each rank may write into each window (default 1048576; a multiple\n"
    "          of 64, at least 64): the window of every rank holds one region per rank and one\n"
    "          more, and its size must stay below 2^31\n"
    "  --dcuda-...  passed on to dcuda_host_init (default --dcuda-ranks-per-device=4 unless\n"
    "          DCUDA_RANKS_PER_DEVICE or the argument is given)\n";

bool starts_with(const std::string& text, const char* prefix) {
  return text.rfind(prefix, 0) == 0;
}

bool read_integer(const std::string& text, long long low, long long high, long long* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long read = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || read < low || read > high) return false;
  *value = read;
  return true;
}

// Returns an empty string when the arguments are good, else what is wrong.
std::string parse_options(int argc, char** argv, options* parsed) {
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    long long value = 0;
    if (argument == "--help" || argument == "-h") {
      parsed->help = true;
    } else if (starts_with(argument, "--dcuda-")) {
      parsed->dcuda_arguments.push_back(argument);
    } else if (starts_with(argument, "--region=")) {
      if (!read_integer(argument.substr(9), small_put_limit, INT_MAX, &value) ||
          value % small_put_limit != 0) {
        return "bad region '" + argument.substr(9) + "'";
      }
      parsed->region = static_cast<int>(value);
    } else if (positional == 0 && read_integer(argument, 1, INT_MAX, &value)) {
      parsed->rounds = static_cast<int>(value);
      ++positional;
    } else if (positional == 1 && read_integer(argument, 0, LLONG_MAX, &value)) {
      parsed->seed = static_cast<std::uint64_t>(value);
      ++positional;
    } else {
      return "unexpected argument '" + argument + "'";
    }
  }
  return "";
}

// The effective DCUDA_FORCE_NETWORK, as the summary names the path: the argument wins.
std::string forced_network(const options& parsed) {
  std::string value;
  const char* environment = std::getenv("DCUDA_FORCE_NETWORK");
  if (environment != nullptr) value = environment;
  for (const std::string& argument : parsed.dcuda_arguments) {
    if (starts_with(argument, "--dcuda-force-network=")) value = argument.substr(22);
  }
  return value.empty() ? "0" : value;
}

std::string bytes_text(unsigned long long bytes) {
  char text[32];
  if (bytes >= 1000000000ULL) {
    std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) / 1e9);
  } else if (bytes >= 1000000ULL) {
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  } else {
    std::snprintf(text, sizeof text, "%llu B", bytes);
  }
  return text;
}

std::string failure_text(const soak_failure& failure, int rounds) {
  char text[320];
  if (failure.kind == corrupted_byte) {
    std::snprintf(text, sizeof text,
                  "round %d, rank %d to rank %d: byte %d of its region is 0x%02x, expected 0x%02x "
                  "(a put of %d bytes, the first %d of them put_notify'd with tag %d)",
                  failure.round, failure.source, failure.target, failure.offset, failure.got,
                  failure.expected, failure.size, failure.small_size, failure.tag);
  } else if (failure.round < rounds) {
    std::snprintf(text, sizeof text,
                  "round %d: rank %d received more than the %d notification(s) of tag %d it was "
                  "sent",
                  failure.round, failure.target, failure.expected, failure.tag);
  } else {
    std::snprintf(text, sizeof text,
                  "after the last round: rank %d had a notification of tag %d left that nobody "
                  "sent",
                  failure.target, failure.tag);
  }
  return text;
}

int soak(const options& parsed, int process, int processes) {
  // Kept modest: every rank checks every byte sent to it, and the rounds are as long as the
  // slowest rank's.
  std::vector<std::string> dcuda_arguments{"gpu_soak"};
  bool ranks_given = std::getenv("DCUDA_RANKS_PER_DEVICE") != nullptr;
  for (const std::string& argument : parsed.dcuda_arguments) {
    ranks_given = ranks_given || starts_with(argument, "--dcuda-ranks-per-device=");
  }
  if (!ranks_given) dcuda_arguments.emplace_back("--dcuda-ranks-per-device=4");
  dcuda_arguments.insert(dcuda_arguments.end(), parsed.dcuda_arguments.begin(),
                         parsed.dcuda_arguments.end());
  std::vector<char*> dcuda_argv;
  for (std::string& argument : dcuda_arguments) dcuda_argv.push_back(argument.data());
  dcuda_argv.push_back(nullptr);
  dcuda_host_context_handle context = nullptr;
  dcuda_host_init(static_cast<int>(dcuda_arguments.size()), dcuda_argv.data(), &context,
                  soak_kernel, threads_per_rank);
  dcuda_rank_info info{};
  dcuda_host_get_rank_info(context, &info);

  const int world = info.rank_count;
  const long long window_bytes =
      (static_cast<long long>(world) + 1) * parsed.region + small_put_limit;
  if (window_bytes > INT_MAX) {
    if (process == 0) {
      std::fprintf(stderr,
                   "gpu_soak: %d ranks with regions of %d bytes need windows of %lld bytes, "
                   "more than a window can hold (2^31 - 1); give a smaller --region\n",
                   world, parsed.region, window_bytes);
    }
    dcuda_host_finish(context);
    return 2;
  }
  const long long stride =
      (window_bytes + window_alignment - 1) / window_alignment * window_alignment;
  soak_setup setup{};
  setup.window_stride = stride;
  setup.window_bytes = static_cast<int>(window_bytes);
  setup.region = parsed.region;
  setup.rounds = parsed.rounds;
  setup.seed = parsed.seed;
  const std::size_t memory_bytes = static_cast<std::size_t>(stride) * info.rank_responsible;
  const std::size_t tally_bytes = sizeof(rank_tally) * info.rank_responsible;
  cudaError_t status = cudaMalloc(&setup.windows, memory_bytes);
  if (status == cudaSuccess) status = cudaMalloc(&setup.tallies, tally_bytes);
  if (status == cudaSuccess) status = cudaMalloc(&setup.failure, sizeof(soak_failure));
  if (status == cudaSuccess) status = cudaMemset(setup.windows, 0, memory_bytes);
  if (status == cudaSuccess) status = cudaMemset(setup.tallies, 0, tally_bytes);
  if (status == cudaSuccess) status = cudaMemset(setup.failure, 0, sizeof(soak_failure));
  if (status == cudaSuccess) status = cudaDeviceSynchronize();
  int allocated = status == cudaSuccess ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &allocated, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (allocated == 0) {
    if (status != cudaSuccess) {
      std::fprintf(stderr, "gpu_soak: process %d: %zu bytes of windows: %s\n", process,
                   memory_bytes, cudaGetErrorString(status));
    }
    dcuda_host_finish(context);
    return 1;
  }
  // For compute-sanitizer memcheck, which knows only memory mapped before the kernel starts.
  const char* share_windows = std::getenv("DCUDA_TEST_SHARE_WINDOWS");
  if (share_windows != nullptr && std::string(share_windows) == "1") {
    dcuda_host_share_memory(context, setup.windows);
  }
  const std::string network = forced_network(parsed);
  if (process == 0) {
    std::printf(
        "gpu_soak: seed %llu, %d rounds, %d ranks on %d processes (%d node(s)), regions "
        "of %d bytes, network path forced: %s\n",
        static_cast<unsigned long long>(parsed.seed), parsed.rounds, world, processes,
        info.node_count, parsed.region, network.c_str());
    std::fflush(stdout);
  }

  const double started = MPI_Wtime();
  dcuda_host_run(context, &setup, sizeof setup);
  double seconds = MPI_Wtime() - started;

  std::vector<rank_tally> tallies(static_cast<std::size_t>(info.rank_responsible));
  soak_failure failure{};
  status = cudaMemcpy(tallies.data(), setup.tallies, tally_bytes, cudaMemcpyDeviceToHost);
  if (status == cudaSuccess) {
    status = cudaMemcpy(&failure, setup.failure, sizeof failure, cudaMemcpyDeviceToHost);
  }
  unsigned long long sums[tally_fields] = {};
  for (const rank_tally& tally : tallies) {
    for (int field = 0; field < tally_fields; ++field) sums[field] += tally.count[field];
  }
  int copied = status == cudaSuccess ? 1 : 0;
  if (copied == 0) {
    std::fprintf(stderr, "gpu_soak: process %d: reading the results: %s\n", process,
                 cudaGetErrorString(status));
  }
  MPI_Allreduce(MPI_IN_PLACE, &copied, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, sums, tally_fields, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  std::vector<soak_failure> failures(static_cast<std::size_t>(processes));
  const int failure_bytes = static_cast<int>(sizeof failure);
  MPI_Gather(&failure, failure_bytes, MPI_BYTE, failures.data(), failure_bytes, MPI_BYTE, 0,
             MPI_COMM_WORLD);
  cudaFree(setup.windows);
  cudaFree(setup.tallies);
  cudaFree(setup.failure);
  dcuda_host_finish(context);

  int failed = 0;
  if (process == 0) {
    const unsigned long long sent = sums[put_notify_count] + sums[notify_count];
    const unsigned long long arrived = sums[received_count] - sums[unexpected_count];
    const unsigned long long lost =
        sums[expected_count] > arrived ? sums[expected_count] - arrived : 0;
    std::printf(
        "gpu_soak: %d rounds, %d ranks on %d processes, network path forced: %s; %llu "
        "puts, %llu put_notifies, %llu notifies, %llu barriers, %s, %llu notifications "
        "received, %llu lost, %llu unexpected, %llu corrupted, %.1f s\n",
        parsed.rounds, world, processes, network.c_str(), sums[put_count], sums[put_notify_count],
        sums[notify_count], sums[barrier_count],
        bytes_text(sums[put_byte_count] + sums[put_notify_byte_count]).c_str(),
        sums[received_count], lost, sums[unexpected_count], sums[corrupted_byte_count], seconds);
    std::string verdict;
    const soak_failure* first = nullptr;
    for (const soak_failure& candidate : failures) {
      if (candidate.claimed != 0 && (first == nullptr || candidate.round < first->round)) {
        first = &candidate;
      }
    }
    if (copied == 0) {
      verdict = "the results could not be read back";
    } else if (first != nullptr) {
      verdict = "first failure: " + failure_text(*first, parsed.rounds);
    } else if (lost != 0 || sums[corrupted_byte_count] != 0 || sums[unexpected_count] != 0) {
      verdict = "failures counted without a record of the first";
    } else if (sums[put_count] != static_cast<unsigned long long>(parsed.rounds) * world ||
               sums[barrier_count] != static_cast<unsigned long long>(parsed.rounds)) {
      // Tallies that do not add up to the rounds asked for: the run checked less than it says.
      verdict = std::to_string(sums[put_count]) + " puts and " +
                std::to_string(sums[barrier_count]) + " barriers for " +
                std::to_string(parsed.rounds) + " rounds of " + std::to_string(world) + " ranks";
    } else if (sums[expected_count] != sent) {
      // The targets' recomputation of the sources' choices disagrees with the sources.
      verdict = "the targets expected " + std::to_string(sums[expected_count]) +
                " notifications, the sources sent " + std::to_string(sent);
    } else if (sums[checked_byte_count] != sums[put_byte_count]) {
      verdict = std::to_string(sums[put_byte_count]) + " bytes put, " +
                std::to_string(sums[checked_byte_count]) + " checked";
    }
    failed = verdict.empty() ? 0 : 1;
    if (failed != 0) {
      std::printf("gpu_soak: FAIL: %s (seed %llu)\n", verdict.c_str(),
                  static_cast<unsigned long long>(parsed.seed));
    } else {
      std::printf("gpu_soak: PASS\n");
    }
    std::fflush(stdout);
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int process = 0, processes = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int processes_here = 0;
  MPI_Comm_size(node, &processes_here);
  MPI_Comm_free(&node);
  options parsed;
  const std::string problem = parse_options(argc, argv, &parsed);
  if (!problem.empty() || parsed.help) {
    if (process == 0) {
      if (!problem.empty()) std::fprintf(stderr, "gpu_soak: %s\n", problem.c_str());
      std::fputs(usage, problem.empty() ? stdout : stderr);
    }
    MPI_Finalize();
    return problem.empty() ? 0 : 2;
  }
  int gpus = 0;
  const cudaError_t status = cudaGetDeviceCount(&gpus);
  int enough = status == cudaSuccess && gpus >= 1 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (enough == 0) {
    if (process == 0) {
      std::printf("SKIP: multi_gpu_soak: needs a GPU (cudaGetDeviceCount: %s)\n",
                  status == cudaSuccess ? "no GPU" : cudaGetErrorString(status));
    }
    MPI_Finalize();
    return 0;
  }
  // dcuda gives process i of a node GPU i modulo the GPUs: where there are fewer GPUs than
  // processes, they share, which the soak means (the peer path between processes of one GPU).
  const char* share = std::getenv("DCUDA_TEST_SHARE_GPUS");
  if ((share != nullptr && std::string(share) == "1") || processes_here > gpus) {
    setenv("DCUDA_ALLOW_SHARED_GPUS", "1", 1);
  }
  const int result = soak(parsed, process, processes);
  MPI_Finalize();
  return result;
}
