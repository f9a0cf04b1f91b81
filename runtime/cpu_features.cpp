#include "runtime/cpu_features.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace edgefuse {

namespace {

constexpr std::array kAllIsas = {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512};

bool cpu_runs(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kPortable:
      return true;
#if defined(__x86_64__) || defined(__i386__)
    // libgcc's checks include the OS enabling the AVX / AVX-512 register state (XGETBV).
    case CpuIsa::kAvx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case CpuIsa::kAvx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
#endif
    default:
      return false;
  }
}

std::string supported_names() {
  std::string names;
  for (CpuIsa isa : kAllIsas) {
    if (!cpu_isa_supported(isa)) continue;
    if (!names.empty()) names += ", ";
    names += cpu_isa_name(isa);
  }
  return names;
}

CpuIsa isa_from_environment() {
  const char* value = std::getenv("EDGEFUSE_CPU_ISA");
  Result<CpuIsa> isa = resolve_cpu_isa(value != nullptr ? value : "");
  if (isa.is_ok()) return *isa;
  const CpuIsa fallback = best_cpu_isa();
  std::fprintf(stderr, "edgefuse: warning: EDGEFUSE_CPU_ISA: %s; using %s\n", isa.status().message().c_str(),
               std::string(cpu_isa_name(fallback)).c_str());
  return fallback;
}

std::atomic<CpuIsa>& active_isa() {
  static std::atomic<CpuIsa> isa{isa_from_environment()};
  return isa;
}

}  // namespace

std::string_view cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kPortable:
      return "portable";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

std::optional<CpuIsa> cpu_isa_from_name(std::string_view name) {
  for (CpuIsa isa : kAllIsas) {
    if (cpu_isa_name(isa) == name) return isa;
  }
  return std::nullopt;
}

bool cpu_isa_compiled([[maybe_unused]] CpuIsa isa) {
#if EF_CPU_DISPATCH_X86
  return true;
#else
  return isa == CpuIsa::kPortable;
#endif
}

bool cpu_isa_supported(CpuIsa isa) {
  return cpu_isa_compiled(isa) && cpu_runs(isa);
}

CpuIsa best_cpu_isa() {
  static const CpuIsa best = [] {
    CpuIsa found = CpuIsa::kPortable;
    for (CpuIsa isa : kAllIsas) {
      if (cpu_isa_supported(isa)) found = isa;
    }
    return found;
  }();
  return best;
}

Result<CpuIsa> resolve_cpu_isa(std::string_view requested) {
  if (requested.empty()) return best_cpu_isa();
  const std::optional<CpuIsa> isa = cpu_isa_from_name(requested);
  if (!isa) {
    return invalid_argument("unknown CPU ISA '", requested, "', expected portable, avx2 or avx512");
  }
  if (!cpu_isa_supported(*isa)) {
    return unsupported("CPU ISA '", requested, "' is not ",
                       cpu_isa_compiled(*isa) ? "supported by this CPU" : "compiled into this build",
                       " (supported: ", supported_names(), ")");
  }
  return *isa;
}

CpuIsa active_cpu_isa() {
  return active_isa().load(std::memory_order_relaxed);
}

Status set_cpu_isa_for_testing(CpuIsa isa) {
  if (!cpu_isa_supported(isa)) {
    return unsupported("CPU ISA '", cpu_isa_name(isa), "' is not supported here (supported: ", supported_names(), ")");
  }
  active_isa().store(isa, std::memory_order_relaxed);
  return Status::ok();
}

}  // namespace edgefuse
