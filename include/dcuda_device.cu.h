// The thesis's device header name (listings 3.4, 3.5): `#include "dcuda_device.cu.h"` keeps
// working.
#pragma once
#include "dcuda/device.cuh"
