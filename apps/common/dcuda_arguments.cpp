#include "dcuda_arguments.h"

#include <cstdlib>

namespace {

constexpr const char* rank_setting = "DCUDA_RANKS_PER_DEVICE";
constexpr const char* rank_argument = "--dcuda-ranks-per-device=";

bool user_set_rank_count(int argc, char** argv) {
  if (std::getenv(rank_setting) != nullptr) return true;
  const std::string prefix = rank_argument;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

dcuda_arguments::dcuda_arguments(int argc, char** argv, int default_rank_limit)
    : arguments_(argv, argv + argc) {
  if (!user_set_rank_count(argc, argv))
    arguments_.push_back(rank_argument + std::to_string(default_rank_limit));
  for (std::string& argument : arguments_) pointers_.push_back(argument.data());
  pointers_.push_back(nullptr);
}
