// dcuda's version. The numbers below are the one place it is written: CMake reads them for the
// package version, and dcuda_get_version() reports the version the library was built as (which
// can differ from these headers' when a program is linked against another installed copy).
#pragma once

#define DCUDA_VERSION_MAJOR 0
#define DCUDA_VERSION_MINOR 2
#define DCUDA_VERSION_PATCH 0

// MAJOR * 10000 + MINOR * 100 + PATCH, for comparisons in the preprocessor.
#define DCUDA_VERSION \
  (DCUDA_VERSION_MAJOR * 10000 + DCUDA_VERSION_MINOR * 100 + DCUDA_VERSION_PATCH)

// Extension: the version of the dcuda library linked into the program. Any argument may be NULL.
void dcuda_get_version(int* major, int* minor, int* patch);
