#include "runtime/host_windows.h"

#include <sstream>
#include <string>
#include <utility>

#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/window_table.h"
#include "runtime/error.h"

namespace dcuda::runtime {
namespace {

[[noreturn]] void refuse(dcuda_error_code code, const char* call, const std::string& text) {
  throw error(code, std::string(call) + ": " + text);
}

}  // namespace

int host_window_table::add(const char* call, host_window window) {
  for (int index = 0; index < slots; ++index) {
    if (windows_[index]) continue;
    generations_[index] = protocol::next_generation(generations_[index]);
    windows_[index] = std::move(window);
    return protocol::encode_window(first_slot + index, generations_[index]);
  }
  refuse(DCUDA_ERROR_INVALID_STATE, call,
         "all " + std::to_string(slots) +
             " host window slots are in use (dcuda_host_win_free releases one)");
}

const host_window& host_window_table::find(const char* call, int handle) const {
  const int index = protocol::window_slot(handle) - first_slot;
  const bool in_range = handle >= 0 && index >= 0 && index < slots;
  if (in_range && windows_[index] && generations_[index] == protocol::window_generation(handle)) {
    return *windows_[index];
  }
  std::ostringstream text;
  text << "window " << handle;
  if (handle < 0) {
    text << " is not a window handle (DCUDA_WIN_NONE or uninitialised?)";
  } else if (protocol::window_slot(handle) < protocol::max_windows) {
    text << " is a window the ranks created with dcuda_win_create, not a host window "
            "(dcuda_host_win_create)";
  } else if (!in_range || generations_[index] == 0 ||
             protocol::window_generation(handle) > generations_[index]) {
    text << " is not a handle dcuda_host_win_create gave";
  } else {
    text << " was released by dcuda_host_win_free";
  }
  refuse(DCUDA_ERROR_INVALID_ARGUMENT, call, text.str());
}

void host_window_table::remove(const char* call, int handle) {
  find(call, handle);
  windows_[protocol::window_slot(handle) - first_slot].reset();
}

void check_target_rank(const char* call, int rank, int world_size) {
  if (rank >= 0 && rank < world_size) return;
  refuse(
      DCUDA_ERROR_INVALID_ARGUMENT, call,
      "target rank " + std::to_string(rank) + " is outside 0.." + std::to_string(world_size - 1));
}

void check_window_target(const char* call, int handle, const host_window& window, int rank,
                         int process, bool reachable, std::size_t offset, std::size_t size) {
  const auto p = static_cast<std::size_t>(process);
  if (!reachable) {
    refuse(DCUDA_ERROR_INVALID_STATE, call,
           "target rank " + std::to_string(rank) + " (process " + std::to_string(process) +
               ") is reached neither by the peer path nor through the network");
  }
  // A process that exposed bytes has a buffer; whether it is mapped here (peer path) or reached
  // through the network, the sizes every process agreed on are what is checked.
  const std::uint64_t window_size = window.sizes[p];
  if (offset <= window_size && size <= window_size - offset) return;
  std::ostringstream text;
  text << "bytes [" << offset << ", " << offset << " + " << size << ") are outside window "
       << handle << " of target rank " << rank << " (process " << process << " exposed "
       << window_size << " bytes)";
  refuse(DCUDA_ERROR_INVALID_ARGUMENT, call, text.str());
}

void check_get_source(const char* call, int rank, int process, bool mapped) {
  if (mapped) return;
  refuse(DCUDA_ERROR_INVALID_STATE, call,
         "target rank " + std::to_string(rank) + " (process " + std::to_string(process) +
             ") is reached only through the network; a get reads this process's window or that "
             "of a process of the node on the peer path");
}

void check_stream_tag(const char* call, int rank, int tag) {
  if (tag >= 0 && tag < protocol::tag_count) return;
  refuse(DCUDA_ERROR_INVALID_ARGUMENT, call,
         "tag " + std::to_string(tag) + " (rank " + std::to_string(rank) + ") is outside 0.." +
             std::to_string(protocol::tag_count - 1));
}

void check_stream_count(const char* call, int rank, int count) {
  if (count >= 0) return;
  refuse(DCUDA_ERROR_INVALID_ARGUMENT, call,
         "count " + std::to_string(count) + " (rank " + std::to_string(rank) + ") is negative");
}

}  // namespace dcuda::runtime
