// Shared by the whole-model and detection tests: each model is imported (ours) and loaded into
// OpenCV DNN (the reference) once per test binary, and OpenCV runs on exactly the tensor we feed.
#pragma once

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>
#include <opencv2/dnn.hpp>

#include "models/detect/detection.h"
#include "models/detector/preprocess.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace edgefuse::test {

struct LoadedModel {
  std::shared_ptr<const Graph> graph;  // null when the import failed
  std::string import_error;
  cv::dnn::Net opencv;  // empty when OpenCV could not read the model
  std::string opencv_error;
};

// The model at `path`, imported and loaded on first use and cached for the process.
LoadedModel& load_model(const std::filesystem::path& path);

// Decoded 8-bit BGR image (empty Mat when unreadable).
cv::Mat read_image(const std::filesystem::path& path);

// Runs OpenCV DNN on `input` (a batch-of-one f32 tensor, any layout the model takes) and returns
// the outputs named like the graph's outputs, in the graph's output order.
std::vector<Tensor> run_opencv(LoadedModel& model, const Tensor& input);

// The reference detection pipeline: OpenCV DNN on the given preprocessed input, then the same
// decode, NMS and unletterbox as the Detector.
std::vector<Detection> reference_yolox_detections(LoadedModel& model, const PreprocessedImage& input,
                                                  const cv::Mat& image, float score_threshold, float iou_threshold);
std::vector<Detection> reference_blazeface_detections(LoadedModel& model, const PreprocessedImage& input,
                                                      const cv::Mat& image, float score_threshold, float iou_threshold);

// What YOLOX-nano finds in the sample photos (models/README.md's reference run): each photo, the
// classes it must contain ("a|b": either) and how many horses at least.
struct PhotoObjects {
  const char* file;  // under the assets folder
  std::vector<std::string> must_contain;
  int min_horses = 0;
};
const std::vector<PhotoObjects>& coco_photo_objects();

// The class names of `detections`, by `labels`.
std::multiset<std::string> class_names(const std::vector<Detection>& detections,
                                       const std::vector<std::string>& labels);

// Checks that `names` (detections in `photo`) hold everything the photo must contain.
void check_photo_objects(const std::multiset<std::string>& names, const PhotoObjects& photo);

}  // namespace edgefuse::test
