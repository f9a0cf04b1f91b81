// EF_ISA_NAMESPACE names the namespace of code compiled once per CPU ISA level
// (runtime/ops/cpu_kernel_table.h). The build defines it (isa_avx2, isa_avx512) for the extra
// compilations of the kernel sources; every other translation unit, the portable compilation of
// those sources included, gets isa_portable.
//
// Why: an inline function or template instantiation compiled in several translation units is
// one weak symbol, and the linker keeps any one copy. Were an AVX-512 copy kept, portable code
// would call it and die with SIGILL on CPUs without AVX-512. So everything a per-ISA source
// defines with external linkage lives in a namespace of its level: its kernels, the shared
// inline math (vector_math.h, unary_math.h, in an inline namespace of this name) and Eigen
// (isa_eigen.h). runtime/check_isa_objects.cmake verifies it on every build.
#pragma once

#ifndef EF_ISA_NAMESPACE
#define EF_ISA_NAMESPACE isa_portable
#endif

#define EF_ISA_PASTE_INNER(a, b) a##b
#define EF_ISA_PASTE(a, b) EF_ISA_PASTE_INNER(a, b)
