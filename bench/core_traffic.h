// Cache traffic between cores: how fast threads pass a tensor through a pointwise kernel when each
// reads what its own core wrote in the previous pass, against what another core wrote. A kernel
// split over threads reads its input where the previous kernel's split left it, so on hosts where
// a core reads another core's writes slowly, a split that differs from its producer's (or that
// cuts every plane in two) costs more than the arithmetic: bench/RESULTS.md reads Conv scaling on
// two threads against these figures.
#pragma once

#include <cstdint>

namespace edgefuse::bench {

struct CoreTrafficOptions {
  int threads = 2;
  int64_t planes = 64;          // the tensor's channels
  int64_t plane_floats = 2704;  // each channel's plane: 52 x 52, YOLOX-nano's middle stage
  int passes = 200;             // kernel passes per timed run
  int runs = 5;                 // timed runs; their median is reported
};

// Bytes read and written per second (GB/s) for each way of splitting the tensor between the
// threads, pass after pass, between two buffers that fit the cores' caches: the median of the runs
// (unlike a peak, the typical cost is what a kernel pays, and on a VM it moves as the host places
// the vCPUs).
struct CoreTrafficFigures {
  double own_slice = 0;    // each thread the same contiguous slice every pass: reads its own writes
  double cut_planes = 0;   // every plane cut into one run per thread (row stripes): shares only the cuts
  double other_slice = 0;  // the slices rotate every pass: every read is of another core's writes
};

// Needs options.threads >= 2 (one thread has no other core); figures are 0 otherwise.
CoreTrafficFigures measure_core_traffic(const CoreTrafficOptions& options);

}  // namespace edgefuse::bench
