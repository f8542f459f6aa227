// The particles case study (thesis 5.4): particles in a 2-D box [0, width] x [0, height] repel
// each other when closer than the cutoff. The box is cut in y into segments of the cutoff's
// height, so a particle feels only particles of its own and the two neighbouring segments. Each
// iteration:
//
//   1. move: for every particle, the force of every other particle of segments s-1, s, s+1 closer
//      than the cutoff (add_force), then velocity, speed cap, position and the box's
//      reflecting walls (advanced). The moved particle goes to one of three lists of its old
//      segment s: it stays in s, goes down to s-1 or up to s+1 (never further: max_speed *
//      time_step < cutoff; a particle that would is an error, never clamped silently);
//   2. migrate: segment s becomes stay(s) ++ up(s-1) ++ down(s+1), in that order, each list in its
//      own order. Every version builds the segments in exactly this order (the GPUs by stable
//      block-wide compaction), so the force sums add the same terms in the same order everywhere.
//
// Storage (segment_store): every segment has a fixed capacity of particle slots and a count; a
// segment that would hold more than its capacity is an error that names it (run_error).
//
// Decomposition: in y only. A process (GPU) owns `segments` consecutive segments, local segments
// 0..segments-1, and keeps two ghost segments, -1 and `segments`, for the neighbours' boundary
// segments: the move of its segment 0 reads segment -1. Its down and up lists likewise have ghost
// slots for the neighbours' lists that migrate into its boundary segments. Per iteration two
// exchanges with each y-neighbour (messages_of in particles_app.h): after the move, the boundary
// segment's down (or up) list; after the migration, the boundary segment itself.
//
// Arithmetic: IEEE double, with the one fused multiply-add of the formulas written out (fused):
// the GPU programs are built with --fmad=false and the CPU library with -ffp-contract=off, so no
// compiler fuses anything else, and CPU and GPU give the same bits.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "host_device.h"

namespace particles {

// The cutoff is also a segment's height; a segment's y range is [s, s + 1).
constexpr double cutoff = 1.0;
// The pair force: k r (1 - r^2 / cutoff^2) along the separation, for r < cutoff (the force of
// the soft potential k/4 cutoff^2 (1 - r^2 / cutoff^2)^2): zero at r = 0 and at the cutoff, at most
// 0.385 k. Its formula needs no square root or division, so the rare pair within the cutoff costs
// a warp four instructions more, not the hundred of a double sqrt and division.
constexpr double stiffness = 10.0;
constexpr double time_step = 0.02;
// A particle moves at most max_speed * time_step = 0.2 per iteration: less than one segment.
constexpr double max_speed = 10.0;
static_assert(max_speed * time_step < cutoff, "a particle could cross more than one segment");
// Initial velocities are uniform in [-initial_speed, initial_speed]^2.
constexpr double initial_speed = 1.0;

struct particle {
  double x, y, vx, vy;
  std::int64_t id;  // 0..particles-1 of the whole box, unique
};

// The box: x in [0, width], y in [0, segments * cutoff].
struct box {
  int width = 0;
  int segments = 0;  // of the whole box (all processes)
  APP_HD double height() const { return segments * cutoff; }
};

APP_HD inline double fused(double a, double b, double c) {
#ifdef __CUDA_ARCH__
  return ::fma(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// Adds the force of a particle at (xj, yj) on one at (xi, yi) to (fx, fy). A particle on itself
// (or on another at the same point) adds zero.
APP_HD inline void add_force(double xi, double yi, double xj, double yj, double& fx, double& fy) {
  const double dx = xi - xj, dy = yi - yj;
  const double r2 = fused(dx, dx, dy * dy);
  if (r2 < cutoff * cutoff) {
    const double scale = stiffness * (1.0 - r2 * (1.0 / (cutoff * cutoff)));
    fx = fused(scale, dx, fx);
    fy = fused(scale, dy, fy);
  }
}

// A wall at 0 and one at `high` reflect a coordinate and its velocity.
APP_HD inline void reflect(double& position, double& velocity, double high) {
  if (position < 0.0) {
    position = -position;
    velocity = -velocity;
  } else if (position > high) {
    position = 2.0 * high - position;
    velocity = -velocity;
  }
}

// One time step of a particle under the force (fx, fy) (unit mass): velocity, capped at
// max_speed, then position, then the walls.
APP_HD inline particle advanced(particle p, double fx, double fy, const box& b) {
  p.vx = p.vx + fx * time_step;
  p.vy = p.vy + fy * time_step;
  const double speed2 = p.vx * p.vx + p.vy * p.vy;
  if (speed2 > max_speed * max_speed) {
    const double scale = max_speed / std::sqrt(speed2);
    p.vx = p.vx * scale;
    p.vy = p.vy * scale;
  }
  p.x = p.x + p.vx * time_step;
  p.y = p.y + p.vy * time_step;
  reflect(p.x, p.vx, static_cast<double>(b.width));
  reflect(p.y, p.vy, b.height());
  return p;
}

// The global segment of a y in [0, height] (the top wall belongs to the last segment).
APP_HD inline int segment_of(double y, const box& b) {
  const int s = static_cast<int>(y / cutoff);
  return s < 0 ? 0 : s >= b.segments ? b.segments - 1 : s;
}

// Where a particle of segment `from` goes: 0 stays, -1 down, +1 up; anything else is an error.
enum class direction : int { stay = 0, down = 1, up = 2, too_far = 3 };
APP_HD inline direction direction_of(int from, int to) {
  return to == from       ? direction::stay
         : to == from - 1 ? direction::down
         : to == from + 1 ? direction::up
                          : direction::too_far;
}

// The input: particle `id` of `count`, drawn from (seed, id), uniform in the box, so that every
// process finds its own particles without a global generator and every decomposition gets the same
// particles.
APP_HD inline double hashed_unit(std::uint64_t seed, std::int64_t id, int component) {
  std::uint64_t x = seed ^ (static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ull) ^
                    (static_cast<std::uint64_t>(component + 1) * 0xC2B2AE3D27D4EB4Full);
  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0);  // 53 bits -> [0, 1)
}

APP_HD inline particle initial_particle(std::uint64_t seed, std::int64_t id, const box& b) {
  particle p;
  p.x = hashed_unit(seed, id, 0) * b.width;
  p.y = hashed_unit(seed, id, 1) * b.height();
  p.vx = (2.0 * hashed_unit(seed, id, 2) - 1.0) * initial_speed;
  p.vy = (2.0 * hashed_unit(seed, id, 3) - 1.0) * initial_speed;
  p.id = id;
  return p;
}

// A view of one process's segments -1..segments (ghosts included) in fixed-capacity slots.
struct segment_store {
  int* counts = nullptr;          // segments + 2
  particle* particles = nullptr;  // (segments + 2) * capacity
  int capacity = 0;
  APP_HD int& count(int segment) const { return counts[segment + 1]; }
  APP_HD particle* slot(int segment) const {
    return particles + static_cast<std::size_t>(segment + 1) * static_cast<std::size_t>(capacity);
  }
};

// The four stores of a process, in one allocation (one dcuda window) of four equal parts:
// current (the segments), and the move's three lists per segment, stay, down and up.
enum store_index : int { current_store = 0, stay_store = 1, down_store = 2, up_store = 3 };
constexpr int store_count = 4;

struct store_layout {
  int segments = 0;  // owned by the process
  int capacity = 0;
  APP_HD std::size_t slots() const { return static_cast<std::size_t>(segments) + 2; }
  // Counts first, padded to 256 bytes, then the particle slots.
  APP_HD std::size_t counts_bytes() const { return (slots() * sizeof(int) + 255) / 256 * 256; }
  APP_HD std::size_t store_bytes() const {
    return counts_bytes() + slots() * static_cast<std::size_t>(capacity) * sizeof(particle);
  }
  APP_HD std::size_t bytes() const { return store_count * store_bytes(); }
  // Byte offsets inside the allocation of segment `segment`'s count and first slot in store k.
  APP_HD std::size_t count_offset(int k, int segment) const {
    return static_cast<std::size_t>(k) * store_bytes() +
           static_cast<std::size_t>(segment + 1) * sizeof(int);
  }
  APP_HD std::size_t slot_offset(int k, int segment) const {
    return static_cast<std::size_t>(k) * store_bytes() + counts_bytes() +
           static_cast<std::size_t>(segment + 1) * static_cast<std::size_t>(capacity) *
               sizeof(particle);
  }
  APP_HD segment_store store(unsigned char* base, int k) const {
    segment_store s;
    unsigned char* at = base + static_cast<std::size_t>(k) * store_bytes();
    s.counts = reinterpret_cast<int*>(at);
    s.particles = reinterpret_cast<particle*>(at + counts_bytes());
    s.capacity = capacity;
    return s;
  }
};

struct stores {
  segment_store current, stay, down, up;
};
APP_HD inline stores stores_in(unsigned char* base, const store_layout& layout) {
  return {layout.store(base, current_store), layout.store(base, stay_store),
          layout.store(base, down_store), layout.store(base, up_store)};
}

// What a process's move and migration found wrong (the first error wins); reported by the host
// after the run, naming the process, the global segment and the count or particle.
enum class error_kind : int { none = 0, overflow = 1, too_far = 2 };
struct run_error {
  int kind;         // error_kind
  int segment;      // global segment
  long long value;  // overflow: the count the segment would hold; too_far: the particle's id
};

}  // namespace particles
