// The thesis's host header name (listing 3.3): `#include "dcuda_host.h"` keeps working.
#pragma once
#include "dcuda/host.h"
