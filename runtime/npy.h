// NumPy .npy files (format versions 1.0-3.0, little-endian, C order) to and from tensors.
#pragma once

#include <string>

#include "runtime/status.h"
#include "runtime/tensor.h"

namespace edgefuse {

Result<Tensor> read_npy(const std::string& path);
Status write_npy(const std::string& path, const Tensor& tensor);

}  // namespace edgefuse
