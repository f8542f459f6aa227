// A plain model of datatypes for the CPU tests: the displacement of every byte of a type map, in
// type-map order, and its bounds, built beside the same type made through the public calls;
// random nestings of every constructor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "dcuda/datatype.h"

namespace datatype_models {

// A type as MPI defines it, without any cleverness: the displacement of every byte of its type
// map, in type-map order, and its bounds.
struct model {
  std::vector<std::int64_t> bytes;
  std::int64_t lb = 0;
  std::int64_t ub = 0;
  std::int64_t extent() const { return ub - lb; }
};

inline model predefined_model(std::int64_t size) {
  model m;
  for (std::int64_t b = 0; b < size; ++b) m.bytes.push_back(b);
  m.ub = size;
  return m;
}

struct model_block {
  std::int64_t copies;
  std::int64_t displacement;
  const model* old;
};

inline model blocks_model(const std::vector<model_block>& blocks) {
  model m;
  bool bounded = false;
  for (const model_block& b : blocks) {
    if (b.copies == 0) continue;
    for (std::int64_t c = 0; c < b.copies; ++c) {
      for (std::int64_t byte : b.old->bytes) {
        m.bytes.push_back(b.displacement + c * b.old->extent() + byte);
      }
    }
    const std::int64_t lb = b.displacement + b.old->lb;
    const std::int64_t ub = b.displacement + (b.copies - 1) * b.old->extent() + b.old->ub;
    m.lb = bounded ? std::min(m.lb, lb) : lb;
    m.ub = bounded ? std::max(m.ub, ub) : ub;
    bounded = true;
  }
  return m;
}

// Element idx (C order of the subarray's own indices) of an array stored in `order`.
inline model subarray_model(const std::vector<int>& sizes, const std::vector<int>& subsizes,
                            const std::vector<int>& starts, dcuda_order order, const model& old) {
  const int dimensions = static_cast<int>(sizes.size());
  model m;
  std::int64_t elements = 1;
  for (int s : subsizes) elements *= s;
  for (std::int64_t e = 0; e < elements; ++e) {
    // The e-th element of the subarray in storage order: for C the last index runs fastest.
    std::vector<int> index(static_cast<std::size_t>(dimensions));
    std::int64_t rest = e;
    for (int k = 0; k < dimensions; ++k) {
      const int d = order == DCUDA_ORDER_C ? dimensions - 1 - k : k;
      index[static_cast<std::size_t>(d)] =
          static_cast<int>(rest % subsizes[static_cast<std::size_t>(d)]);
      rest /= subsizes[static_cast<std::size_t>(d)];
    }
    std::int64_t linear = 0;
    for (int k = 0; k < dimensions; ++k) {
      const int d = order == DCUDA_ORDER_C ? k : dimensions - 1 - k;
      const auto du = static_cast<std::size_t>(d);
      linear = linear * sizes[du] + starts[du] + index[du];
    }
    for (std::int64_t byte : old.bytes) m.bytes.push_back(linear * old.extent() + byte);
  }
  std::int64_t all = 1;
  for (int s : sizes) all *= s;
  m.lb = 0;
  m.ub = all * old.extent();
  return m;
}

// A type built through the public calls, with its model.
struct built {
  dcuda_datatype handle;
  model expected;
};

class random_types {
 public:
  // `scale` multiplies every count and block length: larger types, spanning many chunks of a copy.
  explicit random_types(unsigned seed, int scale = 1) : engine_(seed), scale_(scale) {}

  built make(int depth) {
    const int kind = depth == 0 ? 8 : pick(0, 8);
    switch (kind) {
      case 0: {
        const built old = make(depth - 1);
        const int count = many(4);
        dcuda_datatype t;
        dcuda_type_contiguous(count, old.handle, &t);
        return {t, blocks_model({{count, 0, &old.expected}})};
      }
      case 1:
      case 2: {
        const built old = make(depth - 1);
        const int count = many(4);
        const int blocklength = many(3);
        dcuda_datatype t;
        std::int64_t stride_bytes = 0;
        if (kind == 1) {
          const int stride = pick(-4, 6);
          dcuda_type_vector(count, blocklength, stride, old.handle, &t);
          stride_bytes = stride * old.expected.extent();
        } else {
          stride_bytes = pick(-40, 60);
          dcuda_type_hvector(count, blocklength, stride_bytes, old.handle, &t);
        }
        std::vector<model_block> blocks;
        for (int i = 0; i < count; ++i)
          blocks.push_back({blocklength, i * stride_bytes, &old.expected});
        return {t, blocks_model(blocks)};
      }
      case 3:
      case 4:
      case 5: {
        const built old = make(depth - 1);
        const int count = many(4);
        std::vector<int> lengths, displacements;
        std::vector<std::int64_t> byte_displacements;
        const int same_length = pick(0, 3);
        for (int i = 0; i < count; ++i) {
          lengths.push_back(kind == 5 ? same_length : pick(0, 3));
          displacements.push_back(pick(-3, 8));
          byte_displacements.push_back(pick(-30, 70));
        }
        dcuda_datatype t;
        std::vector<model_block> blocks;
        for (int i = 0; i < count; ++i) {
          const auto iu = static_cast<std::size_t>(i);
          const std::int64_t displacement =
              kind == 4 ? byte_displacements[iu] : displacements[iu] * old.expected.extent();
          blocks.push_back({lengths[iu], displacement, &old.expected});
        }
        if (kind == 3)
          dcuda_type_indexed(count, lengths.data(), displacements.data(), old.handle, &t);
        if (kind == 4) {
          dcuda_type_hindexed(count, lengths.data(), byte_displacements.data(), old.handle, &t);
        }
        if (kind == 5)
          dcuda_type_indexed_block(count, same_length, displacements.data(), old.handle, &t);
        return {t, blocks_model(blocks)};
      }
      case 6: {
        const built old = make(depth - 1);
        const int dimensions = pick(1, 3);
        std::vector<int> sizes, subsizes, starts;
        for (int d = 0; d < dimensions; ++d) {
          sizes.push_back(1 + many(3));
          subsizes.push_back(pick(0, sizes.back()));
          starts.push_back(pick(0, sizes.back() - subsizes.back()));
        }
        const dcuda_order order = pick(0, 1) == 0 ? DCUDA_ORDER_C : DCUDA_ORDER_FORTRAN;
        dcuda_datatype t;
        dcuda_type_subarray(dimensions, sizes.data(), subsizes.data(), starts.data(), order,
                            old.handle, &t);
        return {t, subarray_model(sizes, subsizes, starts, order, old.expected)};
      }
      case 7: {
        const int count = pick(0, 3);
        std::vector<built> parts;
        std::vector<int> lengths;
        std::vector<std::int64_t> displacements;
        std::vector<dcuda_datatype> handles;
        for (int i = 0; i < count; ++i) parts.push_back(make(depth - 1));
        std::vector<model_block> blocks;
        for (int i = 0; i < count; ++i) {
          lengths.push_back(pick(0, 2));
          displacements.push_back(pick(-20, 60));
          handles.push_back(parts[static_cast<std::size_t>(i)].handle);
          blocks.push_back(
              {lengths.back(), displacements.back(), &parts[static_cast<std::size_t>(i)].expected});
        }
        dcuda_datatype t;
        dcuda_type_struct(count, lengths.data(), displacements.data(), handles.data(), &t);
        return {t, blocks_model(blocks)};
      }
      default: {
        const built old = depth == 0 ? predefined() : make(depth - 1);
        if (depth == 0 || pick(0, 1) == 0) return old;
        const std::int64_t lb = pick(-16, 16);
        const std::int64_t extent = pick(0, 40);
        dcuda_datatype t;
        dcuda_type_resized(old.handle, lb, extent, &t);
        model m = old.expected;
        m.lb = lb;
        m.ub = lb + extent;
        return {t, m};
      }
    }
  }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(engine_); }
  int many(int high) { return pick(0, high * scale_); }
  built predefined() {
    const std::pair<dcuda_datatype, int> types[] = {
        {DCUDA_BYTE, 1}, {DCUDA_INT, 4}, {DCUDA_DOUBLE, 8}, {DCUDA_FLOAT, 4}};
    const auto& chosen = types[pick(0, 3)];
    return {chosen.first, predefined_model(chosen.second)};
  }
  std::mt19937 engine_;
  int scale_;
};

// The bytes of `count` elements, in packed order, from the buffer's origin.
inline std::vector<std::int64_t> expected_bytes(const model& m, int count) {
  std::vector<std::int64_t> bytes;
  for (int e = 0; e < count; ++e) {
    for (std::int64_t b : m.bytes) bytes.push_back(e * m.extent() + b);
  }
  return bytes;
}

}  // namespace datatype_models
