// Portability macros shared by CPU and CUDA code.
#pragma once

#if defined(__CUDACC__)
#define FS_HOST_DEVICE __host__ __device__
#define FS_INLINE __forceinline__
#else
#define FS_HOST_DEVICE
#define FS_INLINE inline __attribute__((always_inline))
#endif
