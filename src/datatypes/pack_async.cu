// dcuda_pack_async / dcuda_unpack_async: the typed copy (protocol/typed_copy.h) as a kernel on the
// caller's stream, every warp of the grid a worker; a layout of long runs by a kernel of its own.
#include <algorithm>
#include <string>

#include "datatypes/type_registry.h"
#include "dcuda/datatype.h"
#include "dcuda/detail/protocol/typed_copy.h"
#include "runtime/api_boundary.h"
#include "runtime/cuda_memory.h"

namespace {

using dcuda::protocol::type_layout;

constexpr unsigned threads_per_block = 256;
constexpr unsigned warps_per_block = threads_per_block / 32;
constexpr unsigned max_blocks = 2048;
// The long-run kernel's smallest chunk. A warp copies its chunk's runs one after another, each
// waiting for its data: with 4 KiB chunks a small listed layout (a 4 MiB triangle: 1,025 chunks,
// a block of 8 warps per multiprocessor) left most of the GPU idle, and its chunks of short rows
// waited on up to 16 of them in turn. Smaller chunks give such a copy more warps and each fewer
// runs. A strided layout's runs are all alike, so a smaller chunk only cuts them into more pieces
// (a 16 MiB column block: 0.74 → 0.56 of cudaMemcpy): it keeps 4 KiB. A large copy's chunks grow
// with each warp's share as before (protocol::chunk_for). Measured: docs/performance.md.
constexpr std::uint64_t listed_long_run_chunk_bytes = 1024;

__host__ __device__ inline std::uint64_t long_run_smallest_chunk(const type_layout& layout) {
  return layout.kind == dcuda::protocol::layout_kind::listed ? listed_long_run_chunk_bytes
                                                             : dcuda::protocol::typed_chunk_bytes;
}

// `typed`: the layout as this GPU reads it (its tables in this GPU's memory), a kernel parameter:
// every warp reads it from the constant cache, where looking the handle up in the GPU's table of
// types was a load from memory, and the layout's fields another, before a warp's first copy. A
// type freed after this launch keeps its tables until the GPU has run what was queued before
// (datatypes/device_type_table.h). `Word`: the access width the host found for this copy
// (protocol::copy_width, from the same layout and buffers); one width per kernel keeps the other
// widths' code, and its registers, out of it.
template <typename Word>
__global__ void __launch_bounds__(threads_per_block)
    typed_copy_kernel(const __grid_constant__ type_layout typed, std::uint64_t count,
                      char* typed_bytes, char* packed_bytes, bool packing) {
  const type_layout contiguous = dcuda::protocol::contiguous_layout(count * typed.size);
  const dcuda::protocol::typed_copy copy =
      packing
          ? dcuda::protocol::plan_typed_copy(packed_bytes, contiguous, typed_bytes, typed, count)
          : dcuda::protocol::plan_typed_copy(typed_bytes, typed, packed_bytes, contiguous, 1);
  if (copy.width < sizeof(Word)) __trap();
  const unsigned thread = blockIdx.x * blockDim.x + threadIdx.x;
  dcuda::protocol::copy_typed_share_as<Word>(copy, thread / 32, gridDim.x * warps_per_block,
                                             thread % 32, 32);
}

// The long-run path: a layout whose runs are long enough for a warp's lanes to copy each together
// (protocol::copy_mode: lanes_together; a vector, a column block, a triangle), packed into or
// unpacked from contiguous bytes. The vector fast path of Wu et al.'s GPU datatype engine
// (docs/design.md), widened to listed layouts: only the typed side has a layout, so a chunk walks
// one cursor, each piece copied by the warp's lanes together, and the kernel carries neither the
// second cursor nor the word-by-word copy of short runs. It fits 80 registers a thread without
// spilling (the general kernel takes 106 at 8 bytes a word), so three blocks share an SM instead
// of two, each warp with its loads in flight; at four (64 registers) the 8- and 16-byte kernels
// spill (docs/performance.md, "Datatypes").
constexpr unsigned long_run_blocks_per_sm = 3;

// Runs shorter than one word per lane of a warp.
template <typename Word>
constexpr std::uint64_t short_piece = 32 * sizeof(Word);

// The rest of a chunk from its first short run on: packed bytes up to `end` from cursor `at`.
// The lanes take a run each, 32 runs at a time; the runs among them at least short_piece long
// are copied after them by the whole warp, one by one. A triangle's first rows are dozens of runs
// of 8 to 256 bytes in one chunk: copied one after another by the whole warp, each waited for its
// run's place and data before the next began, and that chunk held the whole copy back.
template <typename Word, bool packing>
__device__ void copy_runs_by_lane(const type_layout& typed, char* typed_bytes, char* packed_bytes,
                                  dcuda::protocol::type_cursor at, std::uint64_t end,
                                  unsigned lane) {
  namespace protocol = dcuda::protocol;
  const bool strided = typed.kind == protocol::layout_kind::strided;
  const auto run_packed = [&](std::uint64_t element, std::uint64_t run) {
    return element * typed.size + (strided ? run * typed.run_bytes : typed.run_starts[run]);
  };
  // A cursor whose run counts on past its element's last: into the next elements.
  const auto wrap = [&](protocol::type_cursor& cursor) {
    while (cursor.run >= typed.run_count) {
      cursor.run -= typed.run_count;
      ++cursor.element;
    }
  };
  for (std::uint64_t first = run_packed(at.element, at.run) + at.within; first < end;) {
    protocol::type_cursor mine{at.element, at.run + lane, lane == 0 ? at.within : 0};
    wrap(mine);
    const std::uint64_t start = run_packed(mine.element, mine.run);
    const std::uint64_t from = start + mine.within;
    const std::uint64_t run_end = start + protocol::run_length(typed, mine.run);
    const std::uint64_t to = run_end < end ? run_end : end;
    // A short run is the lane's alone; the group's long ones (a layout that mixes both) are
    // copied after it by the whole warp, one by one.
    char* const run = typed_bytes + protocol::offset_of(typed, mine);
    char* const to_bytes = packing ? packed_bytes + from : run;
    const char* const from_bytes = packing ? run : packed_bytes + from;
    const std::uint64_t bytes = from < to ? to - from : 0;
    if (bytes < short_piece<Word>) {
      protocol::typed_copy_detail::copy_piece_words<Word>(to_bytes, from_bytes, bytes, 0, 1);
    }
    for (unsigned long_runs = __ballot_sync(~0u, bytes >= short_piece<Word>); long_runs != 0;
         long_runs &= long_runs - 1) {
      const int owner = __ffs(static_cast<int>(long_runs)) - 1;
      protocol::typed_copy_detail::copy_piece_words<Word>(
          reinterpret_cast<char*>(
              __shfl_sync(~0u, reinterpret_cast<std::uintptr_t>(to_bytes), owner)),
          reinterpret_cast<const char*>(
              __shfl_sync(~0u, reinterpret_cast<std::uintptr_t>(from_bytes), owner)),
          __shfl_sync(~0u, bytes, owner), lane, 32);
    }
    at.run += 32;
    at.within = 0;
    wrap(at);
    first = run_packed(at.element, at.run);
  }
}

template <typename Word, bool packing>
__global__ void __launch_bounds__(threads_per_block, long_run_blocks_per_sm)
    long_run_copy_kernel(const __grid_constant__ type_layout typed, std::uint64_t count,
                         char* typed_bytes, char* packed_bytes) {
  namespace protocol = dcuda::protocol;
  const std::uint64_t total = count * typed.size;
  const unsigned lane = threadIdx.x % 32;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * warps_per_block;
  const std::uint64_t chunk_bytes =
      protocol::chunk_for(total, static_cast<std::uint32_t>(warps), long_run_smallest_chunk(typed));
  // A run shorter than one word per lane inside a chunk leaves lanes idle, and many in a row
  // would keep the warp waiting on one after another: from the first one on, the lanes take the
  // chunk's runs one each. The chunk's first and last pieces, runs cut by its edges, do not count.
  for (std::uint64_t begin =
           (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / 32 * chunk_bytes;
       begin < total; begin += warps * chunk_bytes) {
    const std::uint64_t end = total - begin < chunk_bytes ? total : begin + chunk_bytes;
    protocol::type_cursor at = protocol::cursor_at(typed, begin);
    for (std::uint64_t packed = begin; packed < end;) {
      const std::uint64_t left = protocol::contiguous_from(typed, at);
      const std::uint64_t bytes = left < end - packed ? left : end - packed;
      if (bytes < short_piece<Word> && packed != begin && packed + bytes != end) {
        copy_runs_by_lane<Word, packing>(typed, typed_bytes, packed_bytes, at, end, lane);
        break;
      }
      char* const run = typed_bytes + protocol::offset_of(typed, at);
      protocol::typed_copy_detail::copy_piece_words<Word>(packing ? packed_bytes + packed : run,
                                                          packing ? run : packed_bytes + packed,
                                                          bytes, lane, 32);
      protocol::advance(typed, at, bytes);
      packed += bytes;
    }
  }
}

// The kernel of the width the copy allows.
template <typename... Arguments>
void launch_kernel(std::uint32_t width, unsigned blocks, cudaStream_t stream,
                   Arguments... arguments) {
  dcuda::protocol::with_access_word(width, [&](auto word) {
    typed_copy_kernel<decltype(word)><<<blocks, threads_per_block, 0, stream>>>(arguments...);
  });
}

void launch_long_run_kernel(std::uint32_t width, unsigned blocks, cudaStream_t stream,
                            const type_layout& layout, std::uint64_t count, char* typed,
                            char* packed, bool packing) {
  dcuda::protocol::with_access_word(width, [&](auto word) {
    if (packing) {
      long_run_copy_kernel<decltype(word), true>
          <<<blocks, threads_per_block, 0, stream>>>(layout, count, typed, packed);
    } else {
      long_run_copy_kernel<decltype(word), false>
          <<<blocks, threads_per_block, 0, stream>>>(layout, count, typed, packed);
    }
  });
}

void launch(const char* call, dcuda_datatype type, int count, const void* typed, const void* packed,
            cudaStream_t stream, bool packing) {
  using dcuda::runtime::error;
  const auto refuse = [&](const std::string& what) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT, std::string(call) + ": " + what);
  };
  if (count < 0) refuse("count is negative (" + std::to_string(count) + ")");
  auto& registry = dcuda::datatypes::type_registry::instance();
  const auto built = registry.layout(type, call);  // committed, or an error naming the handle
  const type_layout& layout = built->layout;
  const auto elements = static_cast<std::uint64_t>(count);
  if (!packing && dcuda::protocol::covers_a_byte_twice(layout, elements)) {
    refuse(std::to_string(count) + " elements of the datatype " +
           dcuda::datatypes::handle_text(type) + " cover some byte twice" +
           (layout.overlap_period != 0
                ? " (element " + std::to_string(layout.overlap_period) + " meets element 0)"
                : std::string()) +
           ": they cannot lay out the bytes unpacked");
  }
  if (!dcuda::protocol::typed_span_fits(layout, elements)) {
    refuse(std::to_string(count) + " elements of a datatype of " + std::to_string(layout.size) +
           " bytes and extent " + std::to_string(layout.extent) + " span more than 64 bits");
  }
  const std::uint64_t bytes = elements * layout.size;
  if (bytes == 0) return;
  const char* typed_name = packing ? "source" : "target";
  if (typed == nullptr)
    refuse(std::string(typed_name) + " is NULL for " + std::to_string(bytes) + " bytes");
  if (packed == nullptr) refuse("packed is NULL for " + std::to_string(bytes) + " bytes");
  int device = 0;
  if (stream == nullptr) {  // the default stream: the current device's
    DCUDA_CUDA_CHECK(cudaGetDevice(&device));
  } else {
    DCUDA_CUDA_CHECK(cudaStreamGetDevice(stream, &device));
  }
  const type_layout on_gpu = registry.device_layout(device, type, call);
  const dcuda::runtime::device_scope on_device(device);
  const type_layout contiguous = dcuda::protocol::contiguous_layout(bytes);
  const std::uint32_t width = dcuda::protocol::copy_width(layout, contiguous, typed, packed);
  auto* const typed_bytes = static_cast<char*>(const_cast<void*>(typed));
  auto* const packed_bytes = static_cast<char*>(const_cast<void*>(packed));
  const bool long_runs = dcuda::protocol::copy_mode(layout, contiguous) ==
                         dcuda::protocol::typed_copy_mode::lanes_together;
  // A warp per smallest chunk, as many as max_blocks allow.
  const std::uint64_t smallest_chunk =
      long_runs ? long_run_smallest_chunk(layout) : dcuda::protocol::typed_chunk_bytes;
  const std::uint64_t chunks = (bytes + smallest_chunk - 1) / smallest_chunk;
  const auto blocks = static_cast<unsigned>(
      std::min<std::uint64_t>((chunks + warps_per_block - 1) / warps_per_block, max_blocks));
  if (long_runs) {
    launch_long_run_kernel(width, blocks, stream, on_gpu, elements, typed_bytes, packed_bytes,
                           packing);
  } else {
    launch_kernel(width, blocks, stream, on_gpu, elements, typed_bytes, packed_bytes, packing);
  }
  const cudaError_t launched = cudaGetLastError();
  if (launched != cudaSuccess) {
    dcuda::runtime::throw_cuda_error(
        launched, long_runs ? "long_run_copy_kernel<<<>>>" : "typed_copy_kernel<<<>>>");
  }
}

}  // namespace

void dcuda_pack_async(dcuda_datatype type, int count, const void* source, void* packed,
                      cudaStream_t stream) {
  dcuda::runtime::guarded("dcuda_pack_async", [&] {
    launch("dcuda_pack_async", type, count, source, packed, stream, true);
  });
}

void dcuda_unpack_async(dcuda_datatype type, int count, const void* packed, void* target,
                        cudaStream_t stream) {
  dcuda::runtime::guarded("dcuda_unpack_async", [&] {
    launch("dcuda_unpack_async", type, count, target, packed, stream, false);
  });
}
