// The public headers under their <dcuda/...> names, compiled as plain C++ (no nvcc).
#include <dcuda/host.h>
#include <dcuda/version.h>

#include <iostream>

bool consumer_version_matches() {
  int major = -1, minor = -1, patch = -1;
  dcuda_get_version(&major, &minor, &patch);
  std::cout << "consumer: dcuda " << major << "." << minor << "." << patch << std::endl;
  return major == DCUDA_VERSION_MAJOR && minor == DCUDA_VERSION_MINOR &&
         patch == DCUDA_VERSION_PATCH;
}
