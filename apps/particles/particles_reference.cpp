#include "particles_reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "even_share.h"

namespace particles {

std::vector<particle> initial_particles(const box& b, std::int64_t count, std::uint64_t seed) {
  std::vector<particle> all(static_cast<std::size_t>(count));
  for (std::int64_t id = 0; id < count; ++id)
    all[static_cast<std::size_t>(id)] = initial_particle(seed, id, b);
  return all;
}

segment_lists into_segments(const std::vector<particle>& all, const box& b, int first,
                            int segments) {
  segment_lists lists(static_cast<std::size_t>(segments));
  for (const particle& p : all) {
    const int s = segment_of(p.y, b) - first;
    if (s >= 0 && s < segments) lists[static_cast<std::size_t>(s)].push_back(p);
  }
  return lists;
}

namespace {

std::vector<particle> joined(const segment_lists& lists) {
  std::vector<particle> all;
  for (const auto& list : lists) all.insert(all.end(), list.begin(), list.end());
  return all;
}

// The force on p from the particles of `lists` (segments s-1, s, s+1 in that order, each in its
// order: the order every version adds them in).
template <typename Lists>
particle moved(const particle& p, const Lists& neighbourhood, const box& b) {
  double fx = 0, fy = 0;
  for (const std::vector<particle>* list : neighbourhood)
    for (const particle& q : *list) add_force(p.x, p.y, q.x, q.y, fx, fy);
  return advanced(p, fx, fy, b);
}

[[noreturn]] void too_far(const particle& p, int segment) {
  throw std::runtime_error(describe({static_cast<int>(error_kind::too_far), segment, p.id}, 0));
}

}  // namespace

std::vector<particle> simulate(const box& b, segment_lists segments, int iterations) {
  const std::size_t n = static_cast<std::size_t>(b.segments);
  const std::vector<particle> none;
  for (int t = 0; t < iterations; ++t) {
    // Every particle moved (forces from the old positions), kept in its old segment's list.
    segment_lists moved_lists(n);
    for (std::size_t s = 0; s < n; ++s) {
      const std::vector<particle>* neighbourhood[3] = {
          s > 0 ? &segments[s - 1] : &none, &segments[s], s + 1 < n ? &segments[s + 1] : &none};
      for (const particle& p : segments[s]) moved_lists[s].push_back(moved(p, neighbourhood, b));
    }
    // Segment s: those that stay, then those from below, then those from above.
    segment_lists next(n);
    for (std::size_t s = 0; s < n; ++s) {
      const int here = static_cast<int>(s);
      for (const particle& p : moved_lists[s]) {
        const direction d = direction_of(here, segment_of(p.y, b));
        if (d == direction::too_far) too_far(p, here);
        if (d == direction::stay) next[s].push_back(p);
      }
      if (s > 0)
        for (const particle& p : moved_lists[s - 1])
          if (segment_of(p.y, b) == here) next[s].push_back(p);
      if (s + 1 < n)
        for (const particle& p : moved_lists[s + 1])
          if (segment_of(p.y, b) == here) next[s].push_back(p);
    }
    segments = std::move(next);
  }
  return joined(segments);
}

std::vector<particle> reference_result(const box& b, std::int64_t count, std::uint64_t seed,
                                       int iterations) {
  return simulate(b, into_segments(initial_particles(b, count, seed), b, 0, b.segments),
                  iterations);
}

exchange_messages messages_of(exchange_kind kind, int segments, int process, int processes) {
  exchange_messages messages;
  const bool below = process > 0, above = process + 1 < processes;
  const int sent_down = kind == exchange_kind::migrants ? down_store : current_store;
  const int sent_up = kind == exchange_kind::migrants ? up_store : current_store;
  if (below) messages.sends.push_back({sent_down, 0, process - 1});
  if (above) messages.sends.push_back({sent_up, segments - 1, process + 1});
  if (above) messages.receives.push_back({sent_down, segments, process + 1});
  if (below) messages.receives.push_back({sent_up, -1, process - 1});
  return messages;
}

namespace {

// One part of the model: segments first..first+segments-1 of the box, each store with its ghost
// entries -1 and `segments` (element j + 1 holds local segment j), as on a GPU.
struct part {
  int first = 0;
  int segments = 0;
  segment_lists store[store_count];

  std::vector<particle>& at(int k, int segment) {
    return store[k][static_cast<std::size_t>(segment + 1)];
  }
};

// The move of every segment of a part (the GPU's move kernel, or a dcuda rank's move phase).
void move_part(part& p, const box& b) {
  for (int s = 0; s < p.segments; ++s) {
    const std::vector<particle>* neighbourhood[3] = {
        &p.at(current_store, s - 1), &p.at(current_store, s), &p.at(current_store, s + 1)};
    for (int k = stay_store; k <= up_store; ++k) p.at(k, s).clear();
    for (const particle& old : p.at(current_store, s)) {
      const particle q = moved(old, neighbourhood, b);
      const direction d = direction_of(p.first + s, segment_of(q.y, b));
      if (d == direction::too_far) too_far(q, p.first + s);
      p.at(d == direction::stay   ? stay_store
           : d == direction::down ? down_store
                                  : up_store,
           s)
          .push_back(q);
    }
  }
}

// The migration of every segment of a part, into fixed-capacity segments.
void migrate_part(part& p, int index, int capacity) {
  for (int s = 0; s < p.segments; ++s) {
    std::vector<particle>& next = p.at(current_store, s);
    next = p.at(stay_store, s);
    const std::vector<particle>& from_below = p.at(up_store, s - 1);
    const std::vector<particle>& from_above = p.at(down_store, s + 1);
    next.insert(next.end(), from_below.begin(), from_below.end());
    next.insert(next.end(), from_above.begin(), from_above.end());
    if (next.size() > static_cast<std::size_t>(capacity))
      throw std::runtime_error("part " + std::to_string(index) + ": " +
                               describe({static_cast<int>(error_kind::overflow), p.first + s,
                                         static_cast<long long>(next.size())},
                                        capacity));
  }
}

// Every message of one exchange, as the GPU versions send them: each part's sends land in the
// entries its neighbour receives them into.
void exchange(std::vector<part>& parts, exchange_kind kind) {
  const int count = static_cast<int>(parts.size());
  for (int from = 0; from < count; ++from) {
    part& sender = parts[static_cast<std::size_t>(from)];
    for (const segment_message& send : messages_of(kind, sender.segments, from, count).sends) {
      part& receiver = parts[static_cast<std::size_t>(send.peer)];
      for (const segment_message& receive :
           messages_of(kind, receiver.segments, send.peer, count).receives)
        if (receive.peer == from)
          receiver.at(receive.store, receive.segment) = sender.at(send.store, send.segment);
    }
  }
}

}  // namespace

std::vector<particle> decomposed_result(const box& b, std::int64_t count, int parts_count,
                                        std::uint64_t seed, int iterations, int capacity,
                                        const exchanges& made) {
  if (parts_count < 1 || parts_count > b.segments)
    throw std::invalid_argument("decomposed_result: " + std::to_string(b.segments) +
                                " segments do not split into " + std::to_string(parts_count) +
                                " parts of at least one segment");
  const std::vector<particle> all = initial_particles(b, count, seed);
  std::vector<part> parts(static_cast<std::size_t>(parts_count));
  for (int index = 0; index < parts_count; ++index) {
    part& p = parts[static_cast<std::size_t>(index)];
    const item_share share = even_share(index, parts_count, b.segments);
    p.first = share.first;
    p.segments = share.end - share.first;
    for (auto& store : p.store) store.assign(static_cast<std::size_t>(p.segments) + 2, {});
    segment_lists own = into_segments(all, b, p.first, p.segments);
    for (int s = 0; s < p.segments; ++s) {
      if (own[static_cast<std::size_t>(s)].size() > static_cast<std::size_t>(capacity))
        throw std::runtime_error(
            "part " + std::to_string(index) + ": " +
            describe({static_cast<int>(error_kind::overflow), p.first + s,
                      static_cast<long long>(own[static_cast<std::size_t>(s)].size())},
                     capacity));
      p.at(current_store, s) = std::move(own[static_cast<std::size_t>(s)]);
    }
  }
  if (made.ghosts) exchange(parts, exchange_kind::ghosts);
  for (int t = 0; t < iterations; ++t) {
    for (part& p : parts) move_part(p, b);
    if (made.migrants) exchange(parts, exchange_kind::migrants);
    for (int index = 0; index < parts_count; ++index)
      migrate_part(parts[static_cast<std::size_t>(index)], index, capacity);
    if (made.ghosts) exchange(parts, exchange_kind::ghosts);
  }
  std::vector<particle> result;
  for (part& p : parts)
    for (int s = 0; s < p.segments; ++s)
      result.insert(result.end(), p.at(current_store, s).begin(), p.at(current_store, s).end());
  return result;
}

comparison compare_by_id(std::vector<particle> expected, std::vector<particle> actual) {
  comparison result;
  auto by_id = [](const particle& a, const particle& b) { return a.id < b.id; };
  std::sort(expected.begin(), expected.end(), by_id);
  std::sort(actual.begin(), actual.end(), by_id);
  for (std::size_t i = 1; i < actual.size(); ++i)
    if (actual[i].id == actual[i - 1].id) {
      result.problem = "particle " + std::to_string(actual[i].id) + " is there more than once";
      return result;
    }
  if (actual.size() != expected.size()) {
    result.problem = std::to_string(actual.size()) + " particles where the reference has " +
                     std::to_string(expected.size());
    return result;
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const particle &a = actual[i], &e = expected[i];
    if (a.id != e.id) {
      result.problem = "particle " + std::to_string(std::min(a.id, e.id)) +
                       " is missing from one of the results";
      return result;
    }
    for (double d : {a.x - e.x, a.y - e.y, a.vx - e.vx, a.vy - e.vy})
      result.max_deviation = std::max(result.max_deviation, std::fabs(d));
  }
  return result;
}

std::string describe(const run_error& error, int capacity) {
  switch (static_cast<error_kind>(error.kind)) {
    case error_kind::none:
      return "no error";
    case error_kind::overflow:
      return "segment " + std::to_string(error.segment) + " would hold " +
             std::to_string(error.value) + " particles, more than its capacity " +
             std::to_string(capacity) + " (raise --capacity)";
    case error_kind::too_far:
      return "particle " + std::to_string(error.value) + " of segment " +
             std::to_string(error.segment) +
             " moved further than the next segment in one step (time step too large)";
  }
  return "unknown error kind " + std::to_string(error.kind);
}

}  // namespace particles
