// dcuda datatypes (extension, not in the thesis): layouts of non-contiguous data, described as
// MPI's derived datatypes describe them, for the typed calls on the device and the pack/unpack
// calls. docs/api.md ("Datatypes") describes each call; docs/design.md the engine behind them.
//
//   dcuda_datatype column;
//   dcuda_type_vector(rows, 1, columns, DCUDA_DOUBLE, &column);  // one column of a row-major
//   matrix dcuda_type_commit(&column);                                   // flattened once, usable
//   on the GPU
//   ... pass `column` to the kernel (by value, like a dcuda_win) ...
//   dcuda_type_free(&column);
//
// A type's elements follow each other `extent` bytes apart; its data, packed, is `size` bytes an
// element, in the order of its type map (as MPI defines it). Counts and block lengths are in
// elements of the type they repeat; the h-variants (hvector, hindexed, struct) take byte
// displacements and strides, the others take them in extents of the old type. Errors end the
// process as every host call's do (include/dcuda/host.h), naming the call and the bad value.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

// A datatype: a small handle, copied by value (into a kernel's arguments too). Its generation
// tells a freed type from the one created later in the same slot, so that a stale handle is an
// error, never another type.
struct dcuda_datatype {
  std::uint32_t id;
  std::uint32_t generation;
};

// Predefined types, committed from the start; they cannot be freed.
inline constexpr dcuda_datatype DCUDA_BYTE{1, 1};
inline constexpr dcuda_datatype DCUDA_CHAR{2, 1};
inline constexpr dcuda_datatype DCUDA_INT{3, 1};
inline constexpr dcuda_datatype DCUDA_UNSIGNED{4, 1};
inline constexpr dcuda_datatype DCUDA_INT64{5, 1};
inline constexpr dcuda_datatype DCUDA_FLOAT{6, 1};
inline constexpr dcuda_datatype DCUDA_DOUBLE{7, 1};
// The handle of no type: what dcuda_type_free leaves behind.
inline constexpr dcuda_datatype DCUDA_DATATYPE_NULL{0, 0};

// Storage order of dcuda_type_subarray: C (row-major, the last dimension contiguous) or Fortran
// (column-major, the first dimension contiguous).
enum dcuda_order { DCUDA_ORDER_C = 0, DCUDA_ORDER_FORTRAN = 1 };

// `count` copies of `old`, each `old`'s extent after the previous.
void dcuda_type_contiguous(int count, dcuda_datatype old, dcuda_datatype* type);

// `count` blocks of `blocklength` copies of `old`; block i starts i * stride extents of `old`
// (vector) or i * stride bytes (hvector) after block 0.
void dcuda_type_vector(int count, int blocklength, int stride, dcuda_datatype old,
                       dcuda_datatype* type);
void dcuda_type_hvector(int count, int blocklength, std::int64_t stride_bytes, dcuda_datatype old,
                        dcuda_datatype* type);

// `count` blocks; block i holds blocklengths[i] copies of `old` (indexed_block: `blocklength`
// each) and starts displacements[i] extents of `old` (hindexed: bytes) from the origin.
void dcuda_type_indexed(int count, const int blocklengths[], const int displacements[],
                        dcuda_datatype old, dcuda_datatype* type);
void dcuda_type_hindexed(int count, const int blocklengths[], const std::int64_t displacements[],
                         dcuda_datatype old, dcuda_datatype* type);
void dcuda_type_indexed_block(int count, int blocklength, const int displacements[],
                              dcuda_datatype old, dcuda_datatype* type);

// The block of `subsizes` elements starting at `starts` in an array of `sizes` elements of `old`
// (`ndims` dimensions, at most 8), stored in `order`. Its extent is the whole array's, so that
// consecutive elements of the type are consecutive arrays.
void dcuda_type_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                         dcuda_order order, dcuda_datatype old, dcuda_datatype* type);

// `count` blocks; block i holds blocklengths[i] copies of types[i], starting displacements[i]
// bytes from the origin.
void dcuda_type_struct(int count, const int blocklengths[], const std::int64_t displacements[],
                       const dcuda_datatype types[], dcuda_datatype* type);

// `old` with its lower bound and extent set (bytes): where its elements start, and how far apart
// consecutive ones are.
void dcuda_type_resized(dcuda_datatype old, std::int64_t lb, std::int64_t extent,
                        dcuda_datatype* type);

// Flattens the type once and makes it usable by the typed calls, on the host and in kernels.
// Types built from it need no commit of it; a type passed to a typed call must be committed.
void dcuda_type_commit(dcuda_datatype* type);

// Frees the type and sets *type to DCUDA_DATATYPE_NULL. Types built from it stay valid. A freed
// handle passed to any call is an error naming it.
void dcuda_type_free(dcuda_datatype* type);

// Bytes of data in one element, packed.
void dcuda_type_get_size(dcuda_datatype type, std::size_t* size);
// The lower bound and the extent (bytes), as set by resized or computed from the type map.
void dcuda_type_get_extent(dcuda_datatype type, std::int64_t* lb, std::int64_t* extent);
// The bytes one element touches: from true_lb, true_extent bytes (relative to the origin).
void dcuda_type_get_true_extent(dcuda_datatype type, std::int64_t* true_lb,
                                std::int64_t* true_extent);

// Stream-ordered pack and unpack for code outside dcuda kernels: queued on `stream` (a stream of
// the GPU the buffers are on) like a cudaMemcpyAsync, they return at once. The type must stay
// committed until the work is done (dcuda_type_free waits for the GPU before it frees). pack
// copies `count` elements of `type` at `source` to `packed`, contiguous; unpack the reverse, into
// a type that covers no byte twice.
void dcuda_pack_async(dcuda_datatype type, int count, const void* source, void* packed,
                      cudaStream_t stream);
void dcuda_unpack_async(dcuda_datatype type, int count, const void* packed, void* target,
                        cudaStream_t stream);
