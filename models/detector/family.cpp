#include "models/detector/family.h"

#include "models/detect/blazeface_decode.h"
#include "models/detect/yolox_decode.h"
#include "models/detector/detector.h"

namespace edgefuse {
namespace {

constexpr int64_t kBlazeFaceHeadAnchors[] = {512, 384};

bool dim_matches(int64_t declared, int64_t expected) {
  return declared < 0 || declared == expected;
}

// The single image input, f32 rank 4 with batch 1 (or unknown).
Result<const Value*> image_input(const Graph& graph, const char* family) {
  if (graph.inputs().size() != 1) {
    return invalid_model(family, " models take one image input, this one takes ", graph.inputs().size());
  }
  const Value& input = graph.value(graph.inputs()[0]);
  if (input.desc.dtype != DType::kF32 || input.desc.rank() != 4 || !dim_matches(input.desc.shape[0], 1)) {
    return invalid_model(family, " input '", input.name, "' is ", input.desc.to_string(),
                         ", expected f32 of rank 4 with batch 1");
  }
  return &input;
}

std::vector<Shape> output_shapes(const Graph& graph) {
  std::vector<Shape> shapes;
  for (ValueId id : graph.outputs()) shapes.push_back(graph.value(id).desc.shape);
  return shapes;
}

}  // namespace

Result<InputSize> check_yolox_signature(const Graph& graph) {
  EF_ASSIGN_OR_RETURN(const Value* input, image_input(graph, "YOLOX"));
  const Shape& in = input->desc.shape;
  if (in[1] != 3 || in[2] <= 0 || in[3] <= 0) {
    return invalid_model("YOLOX input '", input->name, "' is ", input->desc.to_string(),
                         ", expected NCHW [1, 3, H, W] with known H and W");
  }
  const InputSize size{static_cast<int>(in[3]), static_cast<int>(in[2])};
  if (graph.outputs().size() != 1) {
    return invalid_model("YOLOX models have one output, this one has ", graph.outputs().size());
  }
  const Value& output = graph.value(graph.outputs()[0]);
  const Shape& out = output.desc.shape;
  const int64_t cells = yolox_cell_count(size.width, size.height);
  if (out.size() != 3 || !dim_matches(out[0], 1) || !dim_matches(out[1], cells) ||
      (out[2] >= 0 && out[2] < kYoloxBoxChannels + 1)) {
    return invalid_model("YOLOX output '", output.name, "' is ", output.desc.to_string(), ", expected [1, ", cells,
                         ", 5 + classes] for a ", size.width, "x", size.height, " input");
  }
  return size;
}

Result<InputSize> check_blazeface_signature(const Graph& graph) {
  EF_ASSIGN_OR_RETURN(const Value* input, image_input(graph, "BlazeFace"));
  const Shape& in = input->desc.shape;
  if (in[3] != 3 || in[1] <= 0 || in[1] != in[2]) {
    return invalid_model("BlazeFace input '", input->name, "' is ", input->desc.to_string(),
                         ", expected NHWC [1, S, S, 3] with known S");
  }
  const Result<BlazeFaceOutputs> outputs = find_blazeface_outputs(output_shapes(graph));
  if (!outputs.is_ok()) return outputs.status();
  const int side = static_cast<int>(in[1]);
  return InputSize{side, side};
}

Result<BlazeFaceOutputs> find_blazeface_outputs(std::span<const Shape> output_shapes) {
  if (output_shapes.size() != 4) {
    return invalid_model("BlazeFace models have 4 outputs (scores and regressors of two heads), this one has ",
                         output_shapes.size());
  }
  // The single output whose shape fits [1, anchors, channels].
  auto find = [&](int64_t anchors, int64_t channels) -> Result<size_t> {
    std::vector<size_t> matches;
    for (size_t i = 0; i < output_shapes.size(); ++i) {
      const Shape& s = output_shapes[i];
      if (s.size() == 3 && dim_matches(s[0], 1) && dim_matches(s[1], anchors) && dim_matches(s[2], channels)) {
        matches.push_back(i);
      }
    }
    if (matches.size() != 1) {
      return invalid_model("BlazeFace: ", matches.size(), " outputs fit [1, ", anchors, ", ", channels,
                           "], expected exactly one");
    }
    return matches[0];
  };
  BlazeFaceOutputs outputs{};
  for (size_t head = 0; head < 2; ++head) {
    EF_ASSIGN_OR_RETURN(outputs.scores[head], find(kBlazeFaceHeadAnchors[head], 1));
    EF_ASSIGN_OR_RETURN(outputs.regressors[head], find(kBlazeFaceHeadAnchors[head], kBlazeFaceRegressorChannels));
  }
  return outputs;
}

std::string_view family_name(DetectorFamily family) {
  switch (family) {
    case DetectorFamily::kYolox:
      return "yolox";
    case DetectorFamily::kBlazeFace:
      return "blazeface";
  }
  return "unknown";
}

Result<DetectorFamily> parse_family(std::string_view name) {
  for (DetectorFamily family : {DetectorFamily::kYolox, DetectorFamily::kBlazeFace}) {
    if (name == family_name(family)) return family;
  }
  return invalid_argument("unknown detector family '", name, "', expected 'yolox' or 'blazeface'");
}

Result<DetectorFamily> recognise_family(const Graph& graph) {
  const Result<InputSize> yolox = check_yolox_signature(graph);
  const Result<InputSize> blazeface = check_blazeface_signature(graph);
  if (yolox.is_ok() && !blazeface.is_ok()) return DetectorFamily::kYolox;
  if (blazeface.is_ok() && !yolox.is_ok()) return DetectorFamily::kBlazeFace;
  if (yolox.is_ok()) return invalid_model("the model fits both the YOLOX and BlazeFace signatures; name the family");
  return invalid_model("cannot recognise the detector family (name it explicitly): not YOLOX (",
                       yolox.status().message(), "); not BlazeFace (", blazeface.status().message(), ")");
}

}  // namespace edgefuse
