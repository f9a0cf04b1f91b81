#include "models/detector/family.h"

#include "models/detect/blazeface_decode.h"
#include "models/detect/yolov5_decode.h"
#include "models/detect/yolov8_decode.h"
#include "models/detect/yolox_decode.h"
#include "models/detector/detector.h"

namespace edgefuse {
namespace {

constexpr int64_t kBlazeFaceHeadAnchors[] = {512, 384};

// How messages name a family.
const char* family_title(DetectorFamily family) {
  switch (family) {
    case DetectorFamily::kYolox:
      return "YOLOX";
    case DetectorFamily::kYolov5:
      return "YOLOv5";
    case DetectorFamily::kYolov8:
      return "YOLOv8";
    case DetectorFamily::kBlazeFace:
      return "BlazeFace";
  }
  return "unknown";
}

// Advice for an image input whose layout fits but whose size is symbolic (an export with dynamic axes).
const char* size_advice(bool symbolic_size) {
  return symbolic_size ? " (its size is symbolic: give input-width and input-height, or --input-size)" : "";
}

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

// What the YOLO families share: an NCHW 3-channel input of known size and one output of rank 3
// with batch 1 (or unknown).
struct YoloModel {
  InputSize size;
  const Value* output = nullptr;
};

Result<YoloModel> yolo_model(const Graph& graph, const char* family) {
  EF_ASSIGN_OR_RETURN(const Value* input, image_input(graph, family));
  const Shape& in = input->desc.shape;
  if (in[1] != 3 || in[2] <= 0 || in[3] <= 0) {
    return invalid_model(family, " input '", input->name, "' is ", input->desc.to_string(),
                         ", expected NCHW [1, 3, H, W] with known H and W", size_advice(in[1] == 3));
  }
  if (graph.outputs().size() != 1) {
    return invalid_model(family, " models have one output, this one has ", graph.outputs().size());
  }
  const Value& output = graph.value(graph.outputs()[0]);
  if (output.desc.rank() != 3 || !dim_matches(output.desc.shape[0], 1)) {
    return invalid_model(family, " output '", output.name, "' is ", output.desc.to_string(),
                         ", expected rank 3 with batch 1");
  }
  return YoloModel{{static_cast<int>(in[3]), static_cast<int>(in[2])}, &output};
}

std::vector<Shape> output_shapes(const Graph& graph) {
  std::vector<Shape> shapes;
  for (ValueId id : graph.outputs()) shapes.push_back(graph.value(id).desc.shape);
  return shapes;
}

}  // namespace

Result<InputSize> check_yolox_signature(const Graph& graph) {
  EF_ASSIGN_OR_RETURN(const YoloModel model, yolo_model(graph, "YOLOX"));
  const int64_t cells = yolo_cell_count(model.size.width, model.size.height);
  const Shape& out = model.output->desc.shape;
  if (!dim_matches(out[1], cells) || (out[2] >= 0 && out[2] < kYoloxBoxChannels + 1)) {
    return invalid_model("YOLOX output '", model.output->name, "' is ", model.output->desc.to_string(),
                         ", expected [1, ", cells, ", 5 + classes] for a ", model.size.width, "x", model.size.height,
                         " input");
  }
  return model.size;
}

Result<InputSize> check_yolov5_signature(const Graph& graph) {
  EF_ASSIGN_OR_RETURN(const YoloModel model, yolo_model(graph, "YOLOv5"));
  const int64_t rows = yolov5_row_count(model.size.width, model.size.height);
  const Shape& out = model.output->desc.shape;
  if (!dim_matches(out[1], rows) || (out[2] >= 0 && out[2] < kYolov5BoxChannels + 1)) {
    return invalid_model("YOLOv5 output '", model.output->name, "' is ", model.output->desc.to_string(),
                         ", expected [1, ", rows, ", 5 + classes] (3 anchors a cell) for a ", model.size.width, "x",
                         model.size.height, " input");
  }
  return model.size;
}

Result<InputSize> check_yolov8_signature(const Graph& graph) {
  EF_ASSIGN_OR_RETURN(const YoloModel model, yolo_model(graph, "YOLOv8"));
  const int64_t cells = yolo_cell_count(model.size.width, model.size.height);
  const Shape& out = model.output->desc.shape;
  if ((out[1] >= 0 && out[1] < kYolov8BoxChannels + 1) || !dim_matches(out[2], cells)) {
    return invalid_model("YOLOv8 output '", model.output->name, "' is ", model.output->desc.to_string(),
                         ", expected [1, 4 + classes, ", cells, "] for a ", model.size.width, "x", model.size.height,
                         " input");
  }
  return model.size;
}

Result<InputSize> check_blazeface_signature(const Graph& graph) {
  EF_ASSIGN_OR_RETURN(const Value* input, image_input(graph, "BlazeFace"));
  const Shape& in = input->desc.shape;
  if (in[3] != 3 || in[1] <= 0 || in[1] != in[2]) {
    return invalid_model("BlazeFace input '", input->name, "' is ", input->desc.to_string(),
                         ", expected NHWC [1, S, S, 3] with known S", size_advice(in[3] == 3 && in[1] < 0));
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
    case DetectorFamily::kYolov5:
      return "yolov5";
    case DetectorFamily::kYolov8:
      return "yolov8";
    case DetectorFamily::kBlazeFace:
      return "blazeface";
  }
  return "unknown";
}

Result<DetectorFamily> parse_family(std::string_view name) {
  for (DetectorFamily family : kDetectorFamilies) {
    if (name == family_name(family)) return family;
  }
  return invalid_argument("unknown detector family '", name, "', expected yolox, yolov5, yolov8 or blazeface");
}

Result<InputSize> check_family_signature(const Graph& graph, DetectorFamily family) {
  switch (family) {
    case DetectorFamily::kYolox:
      return check_yolox_signature(graph);
    case DetectorFamily::kYolov5:
      return check_yolov5_signature(graph);
    case DetectorFamily::kYolov8:
      return check_yolov8_signature(graph);
    case DetectorFamily::kBlazeFace:
      return check_blazeface_signature(graph);
  }
  return invalid_argument("unknown detector family");
}

Result<DetectorFamily> recognise_family(const Graph& graph) {
  std::vector<DetectorFamily> fitting;
  std::string why_not;
  for (DetectorFamily family : kDetectorFamilies) {
    const Result<InputSize> fit = check_family_signature(graph, family);
    if (fit.is_ok()) {
      fitting.push_back(family);
    } else {
      why_not +=
          make_message(why_not.empty() ? "" : "; ", "not ", family_title(family), " (", fit.status().message(), ")");
    }
  }
  if (fitting.size() == 1) return fitting[0];
  if (fitting.empty()) return invalid_model("cannot recognise the detector family (name it explicitly): ", why_not);
  std::string names;  // "A, B and C"
  for (size_t i = 0; i < fitting.size(); ++i) {
    names += make_message(i == 0 ? "" : i + 1 == fitting.size() ? " and " : ", ", family_title(fitting[i]));
  }
  return invalid_model("the model fits the ", names, " signatures; name the family");
}

}  // namespace edgefuse
