// When the CUDA executor may hand a Conv to a vendor library (cuBLAS for 1x1 Convs, cuDNN for
// windowed ones) instead of our own kernels.
#pragma once

namespace edgefuse {

// Never; where the first frame's timing finds the library faster than the best of our tilings
// and its result matches ours (with tune_gemm; else never); or wherever it can (tests and
// benchmarks).
enum class LibraryUse { kNever, kWhereFaster, kAlways };

}  // namespace edgefuse
