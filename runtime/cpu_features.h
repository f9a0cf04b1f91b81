// The CPU instruction-set level the optimised kernels run with, chosen at run time.
//
// The hot kernels (runtime/ops/cpu_kernel_table.h) are compiled once per level and one binary
// picks the best level the CPU supports, once, on first use. EDGEFUSE_CPU_ISA (environment) can
// ask for a lower level, e.g. to compare paths on one machine: "portable", "avx2" or "avx512".
// An unknown or unsupported value prints a warning on stderr and the best supported level is
// used instead: a camera box keeps running rather than refusing a deployment-time setting.
#pragma once

#include <optional>
#include <string_view>

#include "runtime/status.h"

namespace edgefuse {

enum class CpuIsa {
  kPortable,  // the build's baseline flags: SSE2 on x86-64 (or EDGEFUSE_CPU_ARCH), NEON on aarch64
  kAvx2,      // x86-64 with AVX2 and FMA
  kAvx512,    // x86-64 with AVX-512 F, BW, DQ and VL (and FMA)
};

// "portable", "avx2", "avx512".
std::string_view cpu_isa_name(CpuIsa isa);
std::optional<CpuIsa> cpu_isa_from_name(std::string_view name);

// Whether this build contains kernels for `isa` (only kPortable off x86-64).
bool cpu_isa_compiled(CpuIsa isa);

// Whether `isa` is compiled in and this CPU (and its OS, for the wider register state) runs it.
bool cpu_isa_supported(CpuIsa isa);

// The highest supported level.
CpuIsa best_cpu_isa();

// The level for an EDGEFUSE_CPU_ISA value: empty means best_cpu_isa(); an unknown name or an
// unsupported level is an error naming the value and the supported levels.
Result<CpuIsa> resolve_cpu_isa(std::string_view requested);

// The level the kernels use: resolved from EDGEFUSE_CPU_ISA on the first call (see the top of
// this file for how a bad value is handled), or the last set_cpu_isa_for_testing.
CpuIsa active_cpu_isa();

// Switches the level for every later kernel call; an error when `isa` is not supported. For
// tests and benchmarks: a kernel already running finishes on the level it started with.
Status set_cpu_isa_for_testing(CpuIsa isa);

}  // namespace edgefuse
