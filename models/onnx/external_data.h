// External tensor data (TensorProto.data_location == EXTERNAL), read under strict rules: the
// location must be a relative path that stays inside the model folder (no "..", no absolute path,
// no symlink leading out), and offset/length must lie within the file.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "runtime/status.h"

namespace edgefuse {

// Reads exactly `expected_bytes` bytes of the tensor's external data into `out`.
// `model_dir` empty means the model came from memory without a folder: external data is refused.
Status read_external_data(const onnx::TensorProto& proto, const std::string& model_dir, size_t expected_bytes,
                          std::string& out);

}  // namespace edgefuse
