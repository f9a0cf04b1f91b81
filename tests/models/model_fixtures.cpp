#include "tests/models/model_fixtures.h"

#include <doctest/doctest.h>

#include <map>
#include <span>

#include <opencv2/imgcodecs.hpp>

#include "models/detect/blazeface_decode.h"
#include "models/detect/labels.h"
#include "models/detect/letterbox.h"
#include "models/detect/nms.h"
#include "models/detect/yolox_decode.h"
#include "models/onnx/onnx_importer.h"

namespace edgefuse::test {
namespace {

Tensor to_tensor(const cv::Mat& mat) {
  EF_ASSERT(mat.type() == CV_32F && mat.isContinuous(), "OpenCV output is not continuous f32");
  Shape shape;
  for (int d = 0; d < mat.dims; ++d) shape.push_back(mat.size[d]);
  Tensor tensor = Tensor::empty(DType::kF32, shape);
  std::copy_n(mat.ptr<float>(), tensor.numel(), tensor.data<float>());
  return tensor;
}

}  // namespace

LoadedModel& load_model(const std::filesystem::path& path) {
  static std::map<std::string, LoadedModel> cache;
  const std::string key = path.string();
  if (auto found = cache.find(key); found != cache.end()) return found->second;
  LoadedModel& model = cache[key];
  Result<std::shared_ptr<Graph>> imported = import_onnx_file(key);
  if (imported.is_ok()) {
    model.graph = std::move(imported).value();
  } else {
    model.import_error = imported.status().to_string();
  }
  try {
    model.opencv = cv::dnn::readNetFromONNX(key);
    model.opencv.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    model.opencv.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  } catch (const cv::Exception& e) {
    model.opencv_error = e.what();
  }
  return model;
}

cv::Mat read_image(const std::filesystem::path& path) {
  return cv::imread(path.string(), cv::IMREAD_COLOR);
}

std::vector<Tensor> run_opencv(LoadedModel& model, const Tensor& input) {
  EF_ASSERT(model.graph != nullptr && !model.opencv.empty());
  std::vector<int> dims(input.shape().begin(), input.shape().end());
  // OpenCV reads the tensor in place; it outlives the forward pass.
  const cv::Mat blob(dims, CV_32F, const_cast<void*>(input.raw_data()));
  model.opencv.setInput(blob);
  std::vector<cv::String> names;
  for (ValueId id : model.graph->outputs()) names.push_back(model.graph->value(id).name);
  std::vector<cv::Mat> outputs;
  model.opencv.forward(outputs, names);
  std::vector<Tensor> tensors;
  for (const cv::Mat& output : outputs) tensors.push_back(to_tensor(output));
  return tensors;
}

std::vector<Detection> reference_yolox_detections(LoadedModel& model, const PreprocessedImage& input,
                                                  const cv::Mat& image, float score_threshold, float iou_threshold) {
  const std::vector<Tensor> outputs = run_opencv(model, input.input);
  const Tensor& output = outputs.at(0);
  const int height = static_cast<int>(input.input.dim(2));
  const int width = static_cast<int>(input.input.dim(3));
  DecodeResult decoded =
      decode_yolox(output.data<float>(), output.dim(1), output.dim(2), width, height, score_threshold);
  EF_ASSERT(decoded.ok(), decoded.error);
  std::vector<Detection> detections = nms_per_class(std::move(decoded.detections), iou_threshold, 300);
  unletterbox(detections, input.letterbox, image.cols, image.rows);
  return detections;
}

std::vector<Detection> reference_blazeface_detections(LoadedModel& model, const PreprocessedImage& input,
                                                      const cv::Mat& image, float score_threshold,
                                                      float iou_threshold) {
  const std::vector<Tensor> outputs = run_opencv(model, input.input);
  const int size = static_cast<int>(input.input.dim(1));
  const std::vector<Anchor> anchors = blazeface_anchors(size);
  // The two heads by their shapes: [1, 512, 1] + [1, 512, 16], then [1, 384, 1] + [1, 384, 16].
  std::vector<Detection> detections;
  size_t first_anchor = 0;
  for (int64_t head_anchors : {512, 384}) {
    const Tensor* scores = nullptr;
    const Tensor* regressors = nullptr;
    for (const Tensor& output : outputs) {
      if (output.dim(1) != head_anchors) continue;
      (output.dim(2) == 1 ? scores : regressors) = &output;
    }
    EF_ASSERT(scores != nullptr && regressors != nullptr, "BlazeFace head of ", head_anchors, " anchors missing");
    DecodeResult decoded = decode_blazeface(
        scores->data<float>(), head_anchors, regressors->data<float>(), regressors->dim(2),
        std::span<const Anchor>(anchors).subspan(first_anchor, static_cast<size_t>(head_anchors)), score_threshold);
    EF_ASSERT(decoded.ok(), decoded.error);
    detections.insert(detections.end(), decoded.detections.begin(), decoded.detections.end());
    first_anchor += static_cast<size_t>(head_anchors);
  }
  detections = nms_class_agnostic(std::move(detections), iou_threshold, 300);
  unletterbox(detections, input.letterbox, image.cols, image.rows);
  return detections;
}

const std::vector<PhotoObjects>& coco_photo_objects() {
  static const std::vector<PhotoObjects> photos = {
      {"data/images/dog.jpg", {"dog", "bicycle", "car|truck"}},
      {"data/images/person.jpg", {"person", "dog", "horse"}},
      {"data/images/giraffe.jpg", {"giraffe", "zebra"}},
      {"data/images/horses.jpg", {"horse"}, 3},
  };
  return photos;
}

std::multiset<std::string> class_names(const std::vector<Detection>& detections,
                                       const std::vector<std::string>& labels) {
  std::multiset<std::string> names;
  for (const Detection& d : detections) names.insert(label_for(labels, d.class_id));
  return names;
}

void check_photo_objects(const std::multiset<std::string>& names, const PhotoObjects& photo) {
  for (const std::string& wanted : photo.must_contain) {
    const size_t bar = wanted.find('|');
    const bool present = bar == std::string::npos
                             ? names.count(wanted) > 0
                             : names.count(wanted.substr(0, bar)) + names.count(wanted.substr(bar + 1)) > 0;
    CHECK_MESSAGE(present, wanted << " not detected in " << photo.file);
  }
  CHECK(static_cast<int>(names.count("horse")) >= photo.min_horses);
}

}  // namespace edgefuse::test
