// The command line a case study hands to dcuda_host_init: its own arguments, and an upper limit on
// the ranks per GPU that the application chooses (its work has that many pieces) unless the user
// set one, with DCUDA_RANKS_PER_DEVICE or --dcuda-ranks-per-device= (docs/settings.md): the user's
// choice wins, and the runtime reports it when it does not fit.
#pragma once

#include <string>
#include <vector>

class dcuda_arguments {
 public:
  dcuda_arguments(int argc, char** argv, int default_rank_limit);
  int argc() const { return static_cast<int>(arguments_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> arguments_;
  std::vector<char*> pointers_;  // into arguments_, then a null pointer, as main's argv
};
