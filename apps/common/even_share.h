// The one way the case studies split items among parts (a GPU's rows or segments among its
// ranks, or among a baseline's blocks in the rank-shaped experiments, or among the CPU model's
// parts): part p of n owns items p * items / n .. (p + 1) * items / n - 1. Shares differ by at
// most one item, and the same formula on the host and the device means a CPU model of a
// decomposition splits exactly as the kernels do.
#pragma once

#include "host_device.h"

struct item_share {
  int first = 0, end = 0;  // items first .. end - 1
};

// 64-bit products: parts * items exceeds 2^31 for a GPU's particles or a large grid's points.
APP_HD inline item_share even_share(int part, int parts, int items) {
  const long long n = parts, count = items;
  return {static_cast<int>(part * count / n), static_cast<int>((part + 1LL) * count / n)};
}
