// Eigen for the per-ISA kernel sources, under the namespace name Eigen_<EF_ISA_NAMESPACE> so no
// Eigen instantiation is shared between ISA levels (see isa_namespace.h). Code after this include
// writes Eigen:: as usual. Include it first, before anything else could include Eigen.
#pragma once

#include "runtime/ops/isa_namespace.h"

#define Eigen EF_ISA_PASTE(Eigen_, EF_ISA_NAMESPACE)
#include <Eigen/Core>
