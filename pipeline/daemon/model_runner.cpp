#include "pipeline/daemon/model_runner.h"

#include <filesystem>

#include "fusion/pass_manager.h"
#include "models/detect/labels.h"
#include "models/onnx/onnx_importer.h"

namespace edgefuse {
namespace {

Result<std::vector<std::string>> model_labels(const ModelConfig& config, DetectorFamily family) {
  if (!config.labels.empty()) {
    std::optional<std::vector<std::string>> labels = read_labels(config.labels.string());
    if (!labels) return io_error("cannot read labels file '", config.labels.string(), "'");
    return std::move(*labels);
  }
  if (family == DetectorFamily::kBlazeFace) return std::vector<std::string>{"face"};
  const std::filesystem::path beside_model = config.path.parent_path() / "coco.names";
  std::error_code error;
  if (std::filesystem::is_regular_file(beside_model, error)) {
    if (std::optional<std::vector<std::string>> labels = read_labels(beside_model.string())) return std::move(*labels);
  }
  return std::vector<std::string>{};
}

YuvImage yuv_view(const DecodedFrame& frame) {
  const FramePlanes& planes = frame.planes();
  YuvImage image;
  image.format = frame.format() == FramePixelFormat::kNV12 ? PixelFormat::kNV12 : PixelFormat::kI420;
  image.width = frame.width();
  image.height = frame.height();
  image.y = planes.data[0];
  image.y_stride = planes.stride[0];
  image.u = planes.data[1];
  image.u_stride = planes.stride[1];
  image.v = planes.data[2];
  image.v_stride = planes.stride[2];
  return image;
}

}  // namespace

Result<std::unique_ptr<ModelRunner>> ModelRunner::create(const ModelConfig& config) {
  if (config.device == "cuda") {
    return unsupported("model '", config.name, "': device cuda is not available in this build yet; use cpu or auto");
  }
  std::unique_ptr<ModelRunner> runner(new ModelRunner());
  runner->name_ = config.name;
  const auto context = [&](const Status& status) {
    return status.with_context(make_message("model '", config.name, "'"));
  };

  Result<std::shared_ptr<Graph>> graph = import_onnx_file(config.path.string());
  if (!graph.is_ok()) return context(graph.status());
  runner->nodes_before_ = static_cast<int>((*graph)->nodes().size());
  Result<DetectorFamily> family = config.family == "auto" ? recognise_family(**graph) : parse_family(config.family);
  if (!family.is_ok()) return context(family.status());
  if (config.fuse && !fusion_disabled_by_env()) {
    Result<std::vector<PassReport>> passes = optimize_graph(**graph);
    if (!passes.is_ok()) return context(passes.status());
  }
  runner->nodes_after_ = static_cast<int>((*graph)->nodes().size());

  Result<std::vector<std::string>> labels = model_labels(config, *family);
  if (!labels.is_ok()) return context(labels.status());
  runner->labels_ = std::move(*labels);

  DetectorOptions options;
  options.score_threshold = static_cast<float>(config.score_threshold);
  options.iou_threshold = static_cast<float>(config.iou_threshold);
  options.max_detections = config.max_detections;
  options.executor.threads = config.threads;
  Result<Detector> detector = Detector::create(std::move(*graph), *family, options);
  if (!detector.is_ok()) return context(detector.status());
  runner->detector_ = std::make_unique<Detector>(std::move(*detector));

  const ModelInputSpec spec = runner->detector_->input_spec();
  const Shape shape =
      spec.layout == TensorLayout::kNCHW ? Shape{1, 3, spec.height, spec.width} : Shape{1, spec.height, spec.width, 3};
  runner->input_ = Tensor::empty(DType::kF32, shape);
  return runner;
}

Result<std::vector<Detection>> ModelRunner::detect(const DecodedFrame& frame) {
  const YuvMatrix matrix = frame.bt709 ? YuvMatrix::kBt709 : YuvMatrix::kBt601;
  EF_ASSIGN_OR_RETURN(const Letterbox letterbox,
                      preprocessor_.run(yuv_view(frame), detector_->input_spec(), matrix, input_.data<float>()));
  return detector_->detect_input(input_, letterbox, frame.width(), frame.height());
}

Result<std::vector<int>> ModelRunner::class_ids(const std::vector<std::string>& names) const {
  std::vector<int> ids;
  for (const std::string& name : names) {
    int found = -1;
    for (size_t id = 0; id < labels_.size() && found < 0; ++id) {
      if (labels_[id] == name) found = static_cast<int>(id);
    }
    if (found < 0) {
      std::string known;
      for (size_t id = 0; id < labels_.size() && id < 8; ++id) known += (id ? ", " : "") + labels_[id];
      return invalid_argument("class '", name, "' is not a label of model '", name_, "' (labels: ", known,
                              labels_.size() > 8 ? ", ..." : "", ")");
    }
    ids.push_back(found);
  }
  return ids;
}

}  // namespace edgefuse
