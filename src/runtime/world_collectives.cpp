#include "runtime/world_collectives.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "dcuda/detail/protocol/calls.h"
#include "dcuda/detail/protocol/heap_layout.h"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/notification_counters.h"
#include "runtime/error.h"
#include "runtime/driver_api.h"
#include "runtime/error_text.h"
#include "transport/message_checks.h"

namespace dcuda::runtime {
namespace {

using window_header = checks::window_contribution_head;
using checks::window_card;

// The bytes a window starting in `allocation` may span. A cudaMalloc allocation is one piece,
// whatever lies after it. Memory of the virtual memory management API (cuMemCreate, mapped piece
// by piece into one reserved range) is several allocations to the driver, each reported alone,
// and a window may cross from one into the next: those mapped without a gap count together.
std::uint64_t contiguous_mapped_bytes(const allocation_range& allocation) {
  std::uint64_t bytes = allocation.size;
  if (made_by_cuda_malloc(allocation.base)) return bytes;
  for (;;) {
    const char* end = static_cast<const char*>(allocation.base) + bytes;
    const std::optional<allocation_range> next = find_allocation(end);
    if (!next || next->base != end || next->size == 0) return bytes;
    bytes += next->size;
  }
}

}  // namespace

world_collectives::world_collectives(const process_paths& paths,
                                     const bootstrap::rank_layout& ranks,
                                     const shared_memory_mappings& shared_memory,
                                     device_buffers& buffers)
    : paths_(paths),
      ranks_(ranks),
      shared_memory_(shared_memory),
      buffers_(buffers),
      shape_(buffers.shape()),
      own_windows_(static_cast<std::size_t>(shape_.device_ranks) * protocol::max_windows) {
  // The heap window exists from the start: what other processes put into a heap lands.
  if (const protocol::window_entry* heaps = buffers_.own_heap_entries()) {
    for (int r = 0; r < shape_.device_ranks; ++r) {
      own_windows_[protocol::window_index(protocol::heap_slot, static_cast<std::uint32_t>(r),
                                          static_cast<std::uint32_t>(shape_.device_ranks))] =
          heaps[r];
    }
  }
}

world_collectives::~world_collectives() {
  // The kernel has ended; a window row upload may still be on its way.
  cudaStreamSynchronize(uploads_.get());
}

const protocol::window_entry& world_collectives::own_window(int slot, int device_rank) const {
  return own_windows_[protocol::window_index(slot, static_cast<std::uint32_t>(device_rank),
                                             static_cast<std::uint32_t>(shape_.device_ranks))];
}

bool world_collectives::holds(const protocol::remote_operation& op) const {
  return current_ && op.window >= 0 && op.window < protocol::max_windows &&
         current_->request.call == static_cast<std::uint32_t>(protocol::call::win_create) &&
         own_window(op.window, op.target_rank - shape_.rank_start).generation == 0;
}

void world_collectives::take(const channel_message& message) {
  if (current_) {
    throw error("host proxy: collective " + std::to_string(message.aux) +
                " started before collective " + std::to_string(current_->sequence) + " ended");
  }
  const std::string problem = checks::check_collective_request(
      std::as_bytes(std::span(message.text.data(), message.text.size())), message.rank);
  if (!problem.empty()) throw error("host proxy: " + problem);
  in_progress& next = current_.emplace();
  next.sequence = static_cast<std::uint32_t>(message.aux);
  std::memcpy(&next.request, message.text.data(), sizeof next.request);
}

std::vector<char> world_collectives::window_contribution() const {
  window_header header{};
  header.windows_in_use = current_->request.windows_in_use;
  header.ranks = shape_.device_ranks;
  std::memcpy(header.generation, current_->request.generation, sizeof header.generation);
  std::vector<char> bytes(sizeof header + sizeof(window_card) * shape_.device_ranks);
  std::memcpy(bytes.data(), &header, sizeof header);
  const protocol::window_offer* offers = buffers_.window_offers();
  for (int r = 0; r < shape_.device_ranks; ++r) {
    window_card card{};
    const volatile protocol::window_offer& offer = offers[r];
    card.base = offer.base;
    card.size = offer.size;
    // What the others will check (checks::check_window_card), first here, where it is the
    // program's mistake and names its rank.
    const auto reject = [&](const std::string& problem) {
      throw error(
          DCUDA_ERROR_INVALID_ARGUMENT,
          "dcuda_win_create: rank " + std::to_string(shape_.rank_start + r) + ": " + problem);
    };
    if (std::string problem = checks::check_window_card(card, shape_.rank_start + r);
        !problem.empty()) {
      reject(problem);
    }
    if (paths_.any_peer() && card.base != 0 && card.size != 0) {
      try {
        const exported_memory exported = export_memory(reinterpret_cast<void*>(card.base));
        card.allocation = exported.handle;
        card.offset = exported.offset;
        card.allocation_bytes = allocation_containing(reinterpret_cast<void*>(card.base)).size;
        card.exported = 1;
      } catch (const error& e) {
        std::ostringstream text;
        text << "dcuda_win_create: rank " << shape_.rank_start + r << ": the window at 0x"
             << std::hex << card.base << std::dec << " (" << card.size
             << " bytes) cannot be shared with the GPUs of other processes (" << e.what()
             << "); allocate windows with cudaMalloc, or set DCUDA_FORCE_NETWORK=1";
        throw error(DCUDA_ERROR_DEVICE_CALL, text.str());
      }
      if (std::string problem = checks::check_window_card(card, shape_.rank_start + r);
          !problem.empty()) {
        reject(problem);  // past the end of its cudaMalloc allocation
      }
    } else if (card.base != 0 && card.size != 0) {
      // Only the network reaches it: the delivery agent writes into it here. A window in memory
      // the driver knows must end inside that allocation; other memory the GPU can write (the
      // device heap) is taken as it is.
      if (const std::optional<allocation_range> allocation =
              find_allocation(reinterpret_cast<void*>(card.base))) {
        const std::uint64_t offset = card.base - reinterpret_cast<std::uint64_t>(allocation->base);
        const std::uint64_t mapped = contiguous_mapped_bytes(*allocation);
        if (card.size > mapped - offset) {
          reject("the window (" + std::to_string(card.size) + " bytes at offset " +
                 std::to_string(offset) + " of its allocation) ends past its CUDA allocation of " +
                 std::to_string(mapped) + " bytes");
        }
      }
    }
    std::memcpy(bytes.data() + sizeof header + sizeof card * r, &card, sizeof card);
  }
  return bytes;
}

void world_collectives::complete_window_creation(
    const std::vector<transport::mpi_engine::contribution>& all,
    protocol::world_collective_result& result) {
  // Every contribution before any is read: the lengths, rank counts and windows the others sent.
  for (std::size_t p = 0; p < all.size(); ++p) {
    const int process = static_cast<int>(p);
    const std::string problem = checks::check_window_contribution(
        std::as_bytes(std::span(all[p].bytes.data(), all[p].bytes.size())), process,
        ranks_.rank_start(process), ranks_.ranks_of(process));
    if (!problem.empty()) {
      throw error(process == shape_.process_index ? DCUDA_ERROR_INTERNAL : DCUDA_ERROR_PEER,
                  "host proxy: " + problem);
    }
  }
  std::uint32_t in_use = 0;
  for (const auto& c : all) {
    window_header header{};
    std::memcpy(&header, c.bytes.data(), sizeof header);
    in_use |= header.windows_in_use;
  }
  result.slot = protocol::lowest_free_slot(in_use);
  if (result.slot < 0) return;
  const int slot = result.slot;
  std::uint32_t newest = 0;
  for (const auto& c : all) {
    window_header header{};
    std::memcpy(&header, c.bytes.data(), sizeof header);
    newest = std::max(newest, header.generation[slot]);
  }
  result.generation = protocol::next_generation(newest);

  const bootstrap::rank_layout& ranks = ranks_;
  std::vector<protocol::window_entry> row(static_cast<std::size_t>(shape_.world_size));
  for (std::size_t p = 0; p < all.size(); ++p) {
    const protocol::route path = paths_.route_to(static_cast<int>(p));
    for (int r = 0; r < ranks.ranks_of(static_cast<int>(p)); ++r) {
      window_card card{};
      std::memcpy(&card, all[p].bytes.data() + sizeof(window_header) + sizeof card * r,
                  sizeof card);
      protocol::window_entry& entry =
          row[static_cast<std::size_t>(ranks.rank_start(static_cast<int>(p)) + r)];
      entry.size = card.size;
      entry.generation = result.generation;
      entry.comm = 0;  // DCUDA_COMM_WORLD
      if (path == protocol::route::local) {
        entry.base = card.base;
        own_windows_[protocol::window_index(slot, static_cast<std::uint32_t>(r),
                                            static_cast<std::uint32_t>(shape_.device_ranks))] =
            entry;
      } else if (path == protocol::route::peer && card.exported != 0) {
        // Shared before the run (dcuda_host_share_memory), or mapped now, while the kernel runs.
        char* mapped = shared_memory_.mapping(static_cast<int>(p), card.base - card.offset);
        if (mapped == nullptr) mapped = mapped_windows_.open(static_cast<int>(p), card.allocation);
        entry.base = reinterpret_cast<std::uint64_t>(mapped) + card.offset;
      }
    }
  }
  protocol::window_entry* device_row =
      buffers_.window_table() +
      static_cast<std::size_t>(slot) * static_cast<std::size_t>(shape_.world_size);
  DCUDA_CUDA_CHECK(cudaMemcpyAsync(device_row, row.data(), row.size() * sizeof(row[0]),
                                   cudaMemcpyHostToDevice, uploads_.get()));
  DCUDA_CUDA_CHECK(cudaStreamSynchronize(uploads_.get()));
}

void world_collectives::publish_result(const protocol::world_collective_result& result,
                                       std::uint32_t sequence) {
  protocol::world_collective_result* shared = buffers_.world_collective_result();
  volatile protocol::world_collective_result& fields = *shared;
  fields.slot = result.slot;
  fields.generation = result.generation;
  protocol::system_atomic<std::uint32_t>(shared->completed)
      .store(sequence, cuda::memory_order_release);
}

bool world_collectives::advance(transport::mpi_engine& engine, bool earlier_operations_out,
                                const std::function<bool()>& arrivals_delivered) {
  if (!current_) return false;
  in_progress& current = *current_;
  const auto call = static_cast<protocol::call>(current.request.call);
  if (!current.begun) {
    // Everything the ranks issued before the collective goes out first: the others count it.
    if (!earlier_operations_out) return false;
    engine.begin_collective(
        static_cast<std::int32_t>(current.request.call),
        call == protocol::call::win_create ? window_contribution() : std::vector<char>{});
    current.begun = true;
  }
  if (!current.contributions) {
    current.contributions = engine.finish_collective();
    if (!current.contributions) {
      std::ostringstream text;
      text << "  process " << shape_.process_index << " waits in " << protocol::call_name(call)
           << " (collective " << current.sequence << " of DCUDA_COMM_WORLD) for";
      const std::vector<int> missing = engine.missing_processes();
      if (missing.empty()) {
        text << " operations still on their way to it\n";
      } else {
        text << " process" << (missing.size() > 1 ? "es" : "");
        for (const int p : missing) text << " " << p;
        text << ", which " << (missing.size() > 1 ? "have" : "has") << " not joined it\n";
      }
      set_status(text.str());
      return false;
    }
  }
  // What arrived before the collective is in the windows before anyone leaves it.
  if (!arrivals_delivered()) return false;

  const auto& all = *current.contributions;
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (all[p].call != static_cast<std::int32_t>(current.request.call)) {
      throw error(DCUDA_ERROR_PEER,
                  describe_collective_mismatch(shape_.process_index, all[shape_.process_index].call,
                                               static_cast<std::int64_t>(p), all[p].call));
    }
  }
  protocol::world_collective_result result{};
  result.slot = -1;
  if (call == protocol::call::win_create) complete_window_creation(all, result);
  if (call == protocol::call::win_free && current.request.slot >= 0 &&
      current.request.slot < protocol::max_windows) {
    for (int r = 0; r < shape_.device_ranks; ++r) {
      own_windows_[protocol::window_index(current.request.slot, static_cast<std::uint32_t>(r),
                                          static_cast<std::uint32_t>(shape_.device_ranks))] = {};
    }
  }
  const std::uint32_t sequence = current.sequence;
  current_.reset();
  set_status({});
  publish_result(result, sequence);
  return true;
}

void world_collectives::set_status(std::string status) {
  std::lock_guard lock(status_mutex_);
  status_ = std::move(status);
}

std::string world_collectives::waiting_for() const {
  std::lock_guard lock(status_mutex_);
  return status_;
}

}  // namespace dcuda::runtime
