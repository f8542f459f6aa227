// The particles case study on the CPU: the input, the reference result the GPU versions are
// checked against, the comparison by particle id, and a model of the distributed algorithm
// (processes or dcuda ranks owning runs of segments, with the two exchanges of
// particles_problem.h) that the CPU tests hold against the reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "particles_problem.h"

namespace particles {

// Particles by segment: element s holds segment s's particles in their order.
using segment_lists = std::vector<std::vector<particle>>;

// Every particle of the box (ids 0..count-1, in id order).
std::vector<particle> initial_particles(const box& b, std::int64_t count, std::uint64_t seed);

// The particles of global segments first..first+segments-1, in the order given (id order for the
// input), by segment.
segment_lists into_segments(const std::vector<particle>& all, const box& b, int first,
                            int segments);

// `iterations` iterations of the whole box from the given segments (no capacity). Returns every
// particle in segment order.
std::vector<particle> simulate(const box& b, segment_lists segments, int iterations);

// The reference: `iterations` iterations on the whole box (no capacity). Returns every particle
// in segment order.
std::vector<particle> reference_result(const box& b, std::int64_t count, std::uint64_t seed,
                                       int iterations);

// One message of an exchange between neighbouring processes (or parts): a segment of a store (its
// count and its particles).
struct segment_message {
  int store;    // store_index
  int segment;  // local segment: sent from 0 or segments-1, received into segments or -1
  int peer;     // the neighbouring process
};
struct exchange_messages {
  std::vector<segment_message> sends, receives;
};
// After the move, the migrants: the down list of segment 0 goes to the process below (its
// ghost down list `segments`: they migrate into its last segment) and the up list of the last
// segment to the process above (its ghost up list -1). After the migration, the ghosts: segment
// 0 goes down (the ghost segment `segments` of the process below), the last segment up (its
// ghost -1).
enum class exchange_kind { migrants, ghosts };
exchange_messages messages_of(exchange_kind kind, int segments, int process, int processes);

// Which exchanges the model makes (the tests drop one to see the result change).
struct exchanges {
  bool migrants = true;
  bool ghosts = true;
};

// The distributed algorithm on the CPU: the box's segments split into `parts` runs, part p owning
// segments p*S/parts..(p+1)*S/parts-1 (the split of a GPU's segments among dcuda ranks; equal
// runs when S divides: the split among processes), every part with ghost segments and lists,
// fixed `capacity` slots per segment, the exchanges of messages_of between the moves and the
// migrations. Returns every particle in segment order: the reference's exactly. Throws
// std::runtime_error naming part, segment and count when a segment overflows its capacity.
std::vector<particle> decomposed_result(const box& b, std::int64_t count, int parts,
                                        std::uint64_t seed, int iterations, int capacity,
                                        const exchanges& made = {});

// The comparison of a result with the reference: every id exactly once in both (the count
// conserved), and the largest difference in position or velocity of a particle.
struct comparison {
  double max_deviation = 0;
  std::string problem;  // empty when every id is there once; else what is wrong
};
comparison compare_by_id(std::vector<particle> expected, std::vector<particle> actual);

// "segment 12 would hold 300 particles, more than its capacity 256 (raise --capacity)" and the
// like: the text of a run_error.
std::string describe(const run_error& error, int capacity);

}  // namespace particles
