// APP_HD marks the case studies' problem code that the CPU references and the GPU kernels share:
// one definition of each formula, compiled by g++ for the references and their tests and by nvcc
// for the kernels, so that a result check compares the same arithmetic.
#pragma once

#ifdef __CUDACC__
#define APP_HD __host__ __device__
#else
#define APP_HD
#endif
