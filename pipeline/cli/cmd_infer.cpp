// edgefuse infer: runs a model on .npy inputs and writes every graph output as an .npy file.
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "pipeline/cli/commands.h"
#include "pipeline/cli/common.h"
#include "runtime/npy.h"

namespace edgefuse::cli {
namespace {

// Output names may hold ':' or '/' (TensorFlow exports do); file names keep [A-Za-z0-9_.-].
std::string output_file_stem(std::string_view name) {
  std::string stem(name);
  for (char& c : stem) {
    const bool keep =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!keep) c = '_';
  }
  if (stem.empty() || stem == "." || stem == "..") stem = "_" + stem;
  return stem;
}

std::string input_list(const Graph& graph) {
  std::string names;
  for (ValueId id : graph.inputs()) {
    const Value& input = graph.value(id);
    names += (names.empty() ? "" : ", ") + ("'" + input.name + "' " + input.desc.to_string());
  }
  return names;
}

std::optional<size_t> find_input(const Graph& graph, std::string_view name) {
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    if (graph.value(graph.inputs()[i]).name == name) return i;
  }
  return std::nullopt;
}

// Maps each --input (NAME=FILE, or FILE alone for a one-input model) to the graph input it feeds;
// returns one file per graph input, in graph input order.
Result<std::vector<std::string>> input_files(const Graph& graph, const std::vector<std::string>& specs) {
  const size_t input_count = graph.inputs().size();
  std::vector<std::string> files(input_count);
  for (const std::string& spec : specs) {
    const size_t equals = spec.find('=');
    std::optional<size_t> index;
    std::string file;
    if (equals != std::string::npos) {
      index = find_input(graph, std::string_view(spec).substr(0, equals));
      file = spec.substr(equals + 1);
    }
    if (!index) {
      std::error_code error;
      const bool whole_is_file = std::filesystem::exists(spec, error);
      if (input_count != 1 || (equals != std::string::npos && !whole_is_file)) {
        if (equals != std::string::npos) {
          return invalid_argument("--input '", spec, "': the model has no input named '", spec.substr(0, equals),
                                  "'; its inputs are ", input_list(graph));
        }
        return invalid_argument("--input '", spec, "' needs the form NAME=FILE: the model has ", input_count,
                                " inputs: ", input_list(graph));
      }
      index = 0;
      file = spec;
    }
    if (file.empty()) return invalid_argument("--input '", spec, "' names no file");
    const std::string& name = graph.value(graph.inputs()[*index]).name;
    if (!files[*index].empty()) return invalid_argument("input '", name, "' is given more than once");
    files[*index] = file;
  }
  for (size_t i = 0; i < input_count; ++i) {
    if (files[i].empty()) {
      const Value& input = graph.value(graph.inputs()[i]);
      return invalid_argument("missing --input for model input '", input.name, "' ", input.desc.to_string());
    }
  }
  return files;
}

Result<std::vector<Tensor>> read_inputs(const Graph& graph, const std::vector<std::string>& files) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < files.size(); ++i) {
    Result<Tensor> tensor = read_npy(files[i]);
    if (!tensor.is_ok()) {
      return tensor.status().with_context(
          make_message("input '", graph.value(graph.inputs()[i]).name, "' from '", files[i], "'"));
    }
    inputs.push_back(std::move(tensor).value());
  }
  return inputs;
}

// One file per output; two names that sanitise to the same file are an error, not an overwrite.
Result<std::vector<std::filesystem::path>> output_paths(const Graph& graph, const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> paths;
  std::set<std::string> stems;
  for (ValueId id : graph.outputs()) {
    const std::string stem = output_file_stem(graph.value(id).name);
    if (!stems.insert(stem).second) {
      return invalid_model("two outputs would both be written to '", stem, ".npy' (names differ only in characters ",
                           "outside [A-Za-z0-9_.-]); one of them is '", graph.value(id).name, "'");
    }
    paths.push_back(dir / (stem + ".npy"));
  }
  return paths;
}

}  // namespace

const CommandSpec& infer_spec() {
  static const CommandSpec spec{
      .name = "infer",
      .summary = "run a model on .npy inputs and write every output as an .npy file",
      .usage = "--model FILE --input [NAME=]FILE.npy [--input ...] --output-dir DIR [options]",
      .options =
          {
              model_option(),
              {.name = "input",
               .value_name = "[NAME=]FILE",
               .description = "an input tensor as .npy; NAME may be left out when the model has one input",
               .required = true,
               .repeatable = true},
              {.name = "output-dir",
               .value_name = "DIR",
               .description = "where to write <output name>.npy files (created if needed)",
               .required = true},
              threads_option(),
              reference_option(),
              no_fuse_option(),
              device_option(),
              precision_option(),
          },
      .notes = "Output file names keep [A-Za-z0-9_.-] from the output name; other characters become '_'.",
  };
  return spec;
}

Status run_infer(const ParsedArgs& args) {
  EF_ASSIGN_OR_RETURN(std::shared_ptr<Graph> graph, load_model(args.get("model")));
  EF_ASSIGN_OR_RETURN(std::vector<std::string> files, input_files(*graph, args.all("input")));
  EF_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, read_inputs(*graph, files));
  const std::filesystem::path output_dir = args.get("output-dir");
  EF_ASSIGN_OR_RETURN(std::vector<std::filesystem::path> paths, output_paths(*graph, output_dir));

  EF_RETURN_IF_ERROR(optimize_model(*graph, args).status());
  EF_ASSIGN_OR_RETURN(const InferenceDevice device, device_from_args(args));
  EF_ASSIGN_OR_RETURN(const GpuBackendOptions gpu, gpu_options_from_args(args));
  EF_ASSIGN_OR_RETURN(std::unique_ptr<InferenceBackend> backend,
                      create_inference_backend(graph, device, executor_options(args, true), gpu));
  EF_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, backend->run(inputs));

  std::error_code error;
  std::filesystem::create_directories(output_dir, error);
  if (error) return io_error("cannot create output folder '", output_dir.string(), "': ", error.message());
  for (size_t i = 0; i < outputs.size(); ++i) {
    EF_RETURN_IF_ERROR(write_npy(paths[i].string(), outputs[i]));
    std::cout << graph->value(graph->outputs()[i]).name << " " << outputs[i].desc().to_string() << " -> "
              << paths[i].string() << "\n";
  }
  return Status::ok();
}

}  // namespace edgefuse::cli
