// The datatype calls of include/dcuda/datatype.h: each checks its arguments, naming the call and
// the bad value, and builds the flat type from its parts' (flat_type.h).
#include <algorithm>
#include <string>
#include <vector>

#include "datatypes/flat_type.h"
#include "datatypes/type_registry.h"
#include "dcuda/datatype.h"
#include "runtime/api_boundary.h"

namespace {

using dcuda::datatypes::block;
using dcuda::datatypes::flat_type;
using dcuda::datatypes::type_registry;
using dcuda::runtime::guarded;

[[noreturn]] void refuse(const char* call, const std::string& what) {
  throw dcuda::runtime::error(DCUDA_ERROR_INVALID_ARGUMENT, std::string(call) + ": " + what);
}

void check_output(const char* call, const void* pointer, const char* name) {
  if (pointer == nullptr) refuse(call, std::string(name) + " is NULL");
}

void check_count(const char* call, std::int64_t value, const char* name) {
  if (value < 0) refuse(call, std::string(name) + " is negative (" + std::to_string(value) + ")");
}

void check_array(const char* call, int count, const void* array, const char* name) {
  if (count > 0 && array == nullptr) {
    refuse(call, std::string(name) + " is NULL for a count of " + std::to_string(count));
  }
}

// The arguments every constructor of blocks takes: the output, the count and the
// displacements (the block lengths, where each block has its own, are checked by the caller).
void check_blocks(const char* call, const dcuda_datatype* type, int count,
                  const void* displacements) {
  check_output(call, type, "type");
  check_count(call, count, "count");
  check_array(call, count, displacements, "displacements");
}

std::string element_name(const char* array, int i) {
  return std::string(array) + "[" + std::to_string(i) + "]";
}

// Copies `count` times `old`, block i of blocklengths[i] copies at displacements[i] bytes.
dcuda_datatype add_blocks(const char* call, int count, const int blocklengths[], int same_length,
                          const std::int64_t displacements[],
                          const std::shared_ptr<const flat_type>& old) {
  std::int64_t runs = 0;
  for (int i = 0; i < count; ++i) {
    const int length = blocklengths != nullptr ? blocklengths[i] : same_length;
    check_count(call, length, element_name("blocklengths", i).c_str());
    runs =
        std::min(runs + dcuda::datatypes::runs_for(*old, length), dcuda::datatypes::max_runs + 1);
  }
  dcuda::datatypes::check_run_count(runs, call);
  std::vector<block> blocks;
  blocks.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    blocks.push_back(
        {blocklengths != nullptr ? blocklengths[i] : same_length, displacements[i], old.get()});
  }
  return type_registry::instance().add(dcuda::datatypes::concatenate(blocks, call), call);
}

// Element displacements (in extents of `old`) as bytes.
std::vector<std::int64_t> in_bytes(const char* call, int count, const int displacements[],
                                   const flat_type& old) {
  std::vector<std::int64_t> bytes(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (__builtin_mul_overflow(static_cast<std::int64_t>(displacements[i]), old.extent,
                               &bytes[i])) {
      refuse(call,
             element_name("displacements", i) + " x the old type's extent does not fit 64 bits");
    }
  }
  return bytes;
}

// A vector of `count` blocks `stride_bytes` apart. When the blocks of a dense old type follow
// each other without a gap it is one block of all the copies: the same type map, built in one
// step instead of one per block.
dcuda_datatype add_vector(const char* call, int count, int blocklength, std::int64_t stride_bytes,
                          dcuda_datatype old_type) {
  check_count(call, count, "count");
  check_count(call, blocklength, "blocklength");
  const auto old = type_registry::instance().flat(old_type, call);
  std::int64_t block_bytes = 0;
  if (!__builtin_mul_overflow(static_cast<std::int64_t>(blocklength), old->extent, &block_bytes) &&
      stride_bytes == block_bytes) {
    return type_registry::instance().add(
        dcuda::datatypes::concatenate(
            {{static_cast<std::int64_t>(count) * blocklength, 0, old.get()}}, call),
        call);
  }
  const std::int64_t runs_per_block = dcuda::datatypes::runs_for(*old, blocklength);
  dcuda::datatypes::check_run_count(
      runs_per_block != 0 && count > (dcuda::datatypes::max_runs + 1) / runs_per_block
          ? dcuda::datatypes::max_runs + 1
          : count * runs_per_block,
      call);
  std::vector<std::int64_t> displacements(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (__builtin_mul_overflow(static_cast<std::int64_t>(i), stride_bytes, &displacements[i])) {
      refuse(call, "block " + std::to_string(i) + "'s displacement does not fit 64 bits");
    }
  }
  return add_blocks(call, count, nullptr, blocklength, displacements.data(), old);
}

}  // namespace

void dcuda_type_contiguous(int count, dcuda_datatype old, dcuda_datatype* type) {
  guarded("dcuda_type_contiguous", [&] {
    const char* call = "dcuda_type_contiguous";
    check_output(call, type, "type");
    check_count(call, count, "count");
    const auto flat = type_registry::instance().flat(old, call);
    *type = type_registry::instance().add(
        dcuda::datatypes::concatenate({{count, 0, flat.get()}}, call), call);
  });
}

void dcuda_type_vector(int count, int blocklength, int stride, dcuda_datatype old,
                       dcuda_datatype* type) {
  guarded("dcuda_type_vector", [&] {
    const char* call = "dcuda_type_vector";
    check_output(call, type, "type");
    const auto flat = type_registry::instance().flat(old, call);
    std::int64_t stride_bytes = 0;
    if (__builtin_mul_overflow(static_cast<std::int64_t>(stride), flat->extent, &stride_bytes)) {
      refuse(call,
             "stride " + std::to_string(stride) + " x the old type's extent does not fit 64 bits");
    }
    *type = add_vector(call, count, blocklength, stride_bytes, old);
  });
}

void dcuda_type_hvector(int count, int blocklength, std::int64_t stride_bytes, dcuda_datatype old,
                        dcuda_datatype* type) {
  guarded("dcuda_type_hvector", [&] {
    const char* call = "dcuda_type_hvector";
    check_output(call, type, "type");
    *type = add_vector(call, count, blocklength, stride_bytes, old);
  });
}

void dcuda_type_indexed(int count, const int blocklengths[], const int displacements[],
                        dcuda_datatype old, dcuda_datatype* type) {
  guarded("dcuda_type_indexed", [&] {
    const char* call = "dcuda_type_indexed";
    check_blocks(call, type, count, displacements);
    check_array(call, count, blocklengths, "blocklengths");
    const auto flat = type_registry::instance().flat(old, call);
    const auto bytes = in_bytes(call, count, displacements, *flat);
    *type = add_blocks(call, count, blocklengths, 0, bytes.data(), flat);
  });
}

void dcuda_type_hindexed(int count, const int blocklengths[], const std::int64_t displacements[],
                         dcuda_datatype old, dcuda_datatype* type) {
  guarded("dcuda_type_hindexed", [&] {
    const char* call = "dcuda_type_hindexed";
    check_blocks(call, type, count, displacements);
    check_array(call, count, blocklengths, "blocklengths");
    const auto flat = type_registry::instance().flat(old, call);
    *type = add_blocks(call, count, blocklengths, 0, displacements, flat);
  });
}

void dcuda_type_indexed_block(int count, int blocklength, const int displacements[],
                              dcuda_datatype old, dcuda_datatype* type) {
  guarded("dcuda_type_indexed_block", [&] {
    const char* call = "dcuda_type_indexed_block";
    check_blocks(call, type, count, displacements);
    check_count(call, blocklength, "blocklength");
    const auto flat = type_registry::instance().flat(old, call);
    const auto bytes = in_bytes(call, count, displacements, *flat);
    *type = add_blocks(call, count, nullptr, blocklength, bytes.data(), flat);
  });
}

void dcuda_type_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                         dcuda_order order, dcuda_datatype old, dcuda_datatype* type) {
  guarded("dcuda_type_subarray", [&] {
    const char* call = "dcuda_type_subarray";
    check_output(call, type, "type");
    if (ndims < 1 || ndims > 8) refuse(call, "ndims is " + std::to_string(ndims) + " (1 to 8)");
    check_array(call, ndims, sizes, "sizes");
    check_array(call, ndims, subsizes, "subsizes");
    check_array(call, ndims, starts, "starts");
    if (order != DCUDA_ORDER_C && order != DCUDA_ORDER_FORTRAN) {
      refuse(call, "order is " + std::to_string(static_cast<int>(order)) +
                       " (DCUDA_ORDER_C or DCUDA_ORDER_FORTRAN)");
    }
    for (int d = 0; d < ndims; ++d) {
      if (sizes[d] < 1) refuse(call, element_name("sizes", d) + " is " + std::to_string(sizes[d]));
      if (subsizes[d] < 0 || subsizes[d] > sizes[d]) {
        refuse(call, element_name("subsizes", d) + " is " + std::to_string(subsizes[d]) +
                         " (0 to sizes[" + std::to_string(d) + "] = " + std::to_string(sizes[d]) +
                         ")");
      }
      if (starts[d] < 0 || starts[d] > sizes[d] - subsizes[d]) {
        refuse(call, element_name("starts", d) + " is " + std::to_string(starts[d]) +
                         " (0 to sizes - subsizes = " + std::to_string(sizes[d] - subsizes[d]) +
                         ")");
      }
    }
    const auto flat = type_registry::instance().flat(old, call);
    *type = type_registry::instance().add(
        dcuda::datatypes::subarray(std::vector<std::int64_t>(sizes, sizes + ndims),
                                   std::vector<std::int64_t>(subsizes, subsizes + ndims),
                                   std::vector<std::int64_t>(starts, starts + ndims),
                                   order == DCUDA_ORDER_FORTRAN, *flat, call),
        call);
  });
}

void dcuda_type_struct(int count, const int blocklengths[], const std::int64_t displacements[],
                       const dcuda_datatype types[], dcuda_datatype* type) {
  guarded("dcuda_type_struct", [&] {
    const char* call = "dcuda_type_struct";
    check_output(call, type, "type");
    check_count(call, count, "count");
    check_array(call, count, blocklengths, "blocklengths");
    check_array(call, count, displacements, "displacements");
    check_array(call, count, types, "types");
    std::vector<std::shared_ptr<const flat_type>> parts;
    std::vector<block> blocks;
    for (int i = 0; i < count; ++i) {
      check_count(call, blocklengths[i], element_name("blocklengths", i).c_str());
      parts.push_back(
          type_registry::instance().flat(types[i], call, element_name("types", i).c_str()));
      blocks.push_back({blocklengths[i], displacements[i], parts.back().get()});
    }
    *type = type_registry::instance().add(dcuda::datatypes::concatenate(blocks, call), call);
  });
}

void dcuda_type_resized(dcuda_datatype old, std::int64_t lb, std::int64_t extent,
                        dcuda_datatype* type) {
  guarded("dcuda_type_resized", [&] {
    const char* call = "dcuda_type_resized";
    check_output(call, type, "type");
    check_count(call, extent, "extent");
    constexpr std::int64_t limit = std::int64_t{1} << 62;
    if (lb > limit || lb < -limit || extent > limit) {
      refuse(call, "lb " + std::to_string(lb) + " or extent " + std::to_string(extent) +
                       " beyond +-2^62");
    }
    const auto flat = type_registry::instance().flat(old, call);
    *type = type_registry::instance().add(dcuda::datatypes::resized(*flat, lb, extent), call);
  });
}

void dcuda_type_commit(dcuda_datatype* type) {
  guarded("dcuda_type_commit", [&] {
    check_output("dcuda_type_commit", type, "type");
    type_registry::instance().commit(*type, "dcuda_type_commit");
  });
}

void dcuda_type_free(dcuda_datatype* type) {
  guarded("dcuda_type_free", [&] {
    check_output("dcuda_type_free", type, "type");
    type_registry::instance().free(*type, "dcuda_type_free");
    *type = DCUDA_DATATYPE_NULL;
  });
}

void dcuda_type_get_size(dcuda_datatype type, std::size_t* size) {
  guarded("dcuda_type_get_size", [&] {
    check_output("dcuda_type_get_size", size, "size");
    *size =
        static_cast<std::size_t>(type_registry::instance().flat(type, "dcuda_type_get_size")->size);
  });
}

void dcuda_type_get_extent(dcuda_datatype type, std::int64_t* lb, std::int64_t* extent) {
  guarded("dcuda_type_get_extent", [&] {
    check_output("dcuda_type_get_extent", lb, "lb");
    check_output("dcuda_type_get_extent", extent, "extent");
    const auto flat = type_registry::instance().flat(type, "dcuda_type_get_extent");
    *lb = flat->lb;
    *extent = flat->extent;
  });
}

void dcuda_type_get_true_extent(dcuda_datatype type, std::int64_t* true_lb,
                                std::int64_t* true_extent) {
  guarded("dcuda_type_get_true_extent", [&] {
    check_output("dcuda_type_get_true_extent", true_lb, "true_lb");
    check_output("dcuda_type_get_true_extent", true_extent, "true_extent");
    const auto flat = type_registry::instance().flat(type, "dcuda_type_get_true_extent");
    *true_lb = flat->true_lb;
    *true_extent = flat->true_ub - flat->true_lb;
  });
}
