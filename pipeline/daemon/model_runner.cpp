#include "pipeline/daemon/model_runner.h"

#include <filesystem>

#include "fusion/pass_manager.h"
#include "models/detect/labels.h"
#include "models/detector/model_loading.h"
#include "pipeline/daemon/daemon_log.h"

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

// Each batch slot's detections (or the batch's error) to the frame it came from.
void hand_out(Result<std::vector<std::vector<Detection>>> detections, const std::vector<size_t>& batched,
              std::vector<Result<std::vector<Detection>>>& results) {
  for (size_t slot = 0; slot < batched.size(); ++slot) {
    if (detections.is_ok()) {
      results[batched[slot]] = std::move((*detections)[slot]);
    } else {
      results[batched[slot]] = detections.status();
    }
  }
}

}  // namespace

Result<std::unique_ptr<ModelRunner>> ModelRunner::create(const ModelConfig& config) {
  std::unique_ptr<ModelRunner> runner(new ModelRunner());
  runner->name_ = config.name;
  const auto context = [&](const Status& status) {
    return status.with_context(make_message("model '", config.name, "'"));
  };
  Result<InferenceDevice> device = parse_inference_device(config.device);
  if (!device.is_ok()) return context(device.status());

  Result<std::shared_ptr<Graph>> graph =
      import_detector_model(config.path.string(), ImageSize{config.input_width, config.input_height});
  if (!graph.is_ok()) return context(graph.status());
  runner->nodes_before_ = static_cast<int>((*graph)->nodes().size());
  Result<DetectorFamily> family = config.family == "auto" ? recognise_family(**graph) : parse_family(config.family);
  if (!family.is_ok()) return context(family.status());
  if (config.fuse && !fusion_disabled_by_env()) {
    Result<std::vector<PassReport>> passes =
        optimize_graph(**graph, runs_on_gpu(*device) ? cuda_fusion_options() : FusionOptions{});
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
  options.max_batch = config.max_batch;
  options.device = *device;
  options.gpu.fp16 = config.precision == "fp16";
  options.gpu.progress = [name = config.name](const std::string& message) {
    daemon_log("model '", name, "': ", message);
  };
  Result<Detector> detector = Detector::create(*graph, *family, options);
  if (!detector.is_ok() && options.max_batch > 1) {
    daemon_log("model '", config.name, "': max-batch ", config.max_batch, " not possible (",
               detector.status().message(), "); frames run one at a time");
    options.max_batch = 1;
    detector = Detector::create(*graph, *family, options);
  }
  if (!detector.is_ok()) return context(detector.status());
  runner->detector_ = std::make_unique<Detector>(std::move(*detector));

  const ModelInputSpec spec = runner->detector_->input_spec();
  const int64_t batch = runner->detector_->max_batch();
  const Shape shape = spec.layout == TensorLayout::kNCHW ? Shape{batch, 3, spec.height, spec.width}
                                                         : Shape{batch, spec.height, spec.width, 3};
  runner->input_ = Tensor::empty(DType::kF32, shape);
  if (runner->detector_->on_gpu()) {
    Result<std::unique_ptr<GpuYuvPreprocessor>> gpu = GpuYuvPreprocessor::create();
    if (gpu.is_ok()) {
      runner->gpu_preprocessor_ = std::move(*gpu);
    } else {
      daemon_log("model '", config.name, "': preprocessing stays on the CPU (", gpu.status().message(), ")");
    }
  }
  return runner;
}

std::vector<Result<std::vector<Detection>>> ModelRunner::detect_on_gpu(std::span<const DecodedFrame* const> frames) {
  const ModelInputSpec spec = detector_->input_spec();
  const int64_t per_item = int64_t{3} * spec.width * spec.height;
  std::vector<Result<std::vector<Detection>>> results(frames.size(),
                                                      Result<std::vector<Detection>>(std::vector<Detection>{}));
  // Frames the GPU cannot take fail alone, before the batch is formed.
  std::vector<size_t> batched;
  std::vector<Detector::SourceImage> sources;
  for (size_t i = 0; i < frames.size(); ++i) {
    const Status valid = validate_yuv_image(yuv_view(*frames[i])).with_context("GPU YUV preprocessing");
    if (!valid.is_ok()) {
      results[i] = valid;
      continue;
    }
    batched.push_back(i);
    const DecodedFrame& frame = *frames[i];
    sources.push_back({compute_letterbox(frame.width(), frame.height(), spec.width, spec.height, spec.centre),
                       frame.width(), frame.height()});
  }
  if (batched.empty()) return results;
  const InputFiller fill = [&](std::span<void* const> inputs, void* stream) -> Status {
    for (size_t slot = 0; slot < batched.size(); ++slot) {
      const DecodedFrame& frame = *frames[batched[slot]];
      const YuvMatrix matrix = frame.bt709 ? YuvMatrix::kBt709 : YuvMatrix::kBt601;
      float* dst = static_cast<float*>(inputs[0]) + static_cast<int64_t>(slot) * per_item;
      EF_RETURN_IF_ERROR(
          gpu_preprocessor_->enqueue(yuv_view(frame), spec, matrix, dst, stream, static_cast<int>(slot)).status());
    }
    return Status::ok();
  };
  Result<std::vector<std::vector<Detection>>> detections = detector_->detect_batch_filled(fill, sources);
  hand_out(std::move(detections), batched, results);
  return results;
}

std::vector<Result<std::vector<Detection>>> ModelRunner::detect(std::span<const DecodedFrame* const> frames) {
  EF_ASSERT(!frames.empty() && static_cast<int>(frames.size()) <= max_batch());
  if (gpu_preprocessor_ != nullptr) return detect_on_gpu(frames);
  detector_->prepare();  // the CPU's worker threads wake while the frames are preprocessed
  const ModelInputSpec spec = detector_->input_spec();
  const int64_t per_item = int64_t{3} * spec.width * spec.height;
  std::vector<Result<std::vector<Detection>>> results(frames.size(),
                                                      Result<std::vector<Detection>>(std::vector<Detection>{}));
  std::vector<Detector::SourceImage> sources;
  std::vector<size_t> batched;  // which frames went into the batch, in slot order
  for (size_t i = 0; i < frames.size(); ++i) {
    const DecodedFrame& frame = *frames[i];
    const YuvMatrix matrix = frame.bt709 ? YuvMatrix::kBt709 : YuvMatrix::kBt601;
    EF_ASSERT(input_.numel() >= static_cast<int64_t>(batched.size() + 1) * per_item);
    float* slot = input_.data<float>() + static_cast<int64_t>(batched.size()) * per_item;
    Result<Letterbox> letterbox = preprocessor_.run(yuv_view(frame), spec, matrix, slot);
    if (!letterbox.is_ok()) {
      results[i] = letterbox.status();
      continue;
    }
    sources.push_back({*letterbox, frame.width(), frame.height()});
    batched.push_back(i);
  }
  if (batched.empty()) return results;
  Shape shape = input_.shape();
  shape[0] = static_cast<int64_t>(batched.size());
  const Tensor inputs = Tensor::wrap(DType::kF32, shape, input_.data<float>());
  Result<std::vector<std::vector<Detection>>> detections = detector_->detect_batch(inputs, sources);
  hand_out(std::move(detections), batched, results);
  return results;
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
