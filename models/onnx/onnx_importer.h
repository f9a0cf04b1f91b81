// ONNX import: reads a model (file or bytes), validates it and converts it to the graph IR in
// opset-13 form (see runtime/graph.h). Supported: default-domain opsets 7..18, the ops listed in
// docs/SUPPORTED_OPS.md. Bad models give a Status that names the node, tensor or attribute; the
// importer never trusts ONNX's checker or shape inference to catch malformed input.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/graph.h"
#include "runtime/status.h"

namespace edgefuse {

struct OnnxImportOptions {
  bool run_checker = true;          // onnx::checker::check_model (exceptions become Status)
  bool run_shape_inference = true;  // fills value_info; used to give values known descs
  // Dims for graph inputs, by name, fixed before anything else reads the model: what an export with
  // dynamic axes leaves symbolic. -1 keeps the declared dim; a given dim must agree with a declared
  // fixed one, and the rank with a declared shape.
  std::map<std::string, std::vector<int64_t>> input_dims;
};

// Reads, validates and converts a model. External data is resolved relative to the model's folder.
Result<std::shared_ptr<Graph>> import_onnx_file(const std::string& path, const OnnxImportOptions& options = {});

// Same from bytes in memory; `model_dir` is where external data files are looked up ("" = none allowed).
Result<std::shared_ptr<Graph>> import_onnx_bytes(const std::string& bytes, const std::string& model_dir,
                                                 const OnnxImportOptions& options = {});

}  // namespace edgefuse
