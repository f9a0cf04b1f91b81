// One configured model at work: the detector (fused plan), its labels, and the fused YUV
// preprocessing that turns a decoded frame straight into the model's input tensor.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "models/detector/detector.h"
#include "pipeline/config/config.h"
#include "pipeline/preprocess/gpu_yuv_preprocessor.h"
#include "pipeline/preprocess/yuv_preprocessor.h"
#include "pipeline/video/decoded_frame.h"
#include "runtime/tensor.h"

namespace edgefuse {

class ModelRunner {
 public:
  // Imports and optimises the model (unless fuse is off), recognises or checks its family, reads
  // labels (labels file, else coco.names beside a YOLOX model, "face" for BlazeFace). Errors name
  // the model by its config name.
  static Result<std::unique_ptr<ModelRunner>> create(const ModelConfig& config);

  // Preprocesses the frames into one batch and runs it (max_batch() frames at most); per frame
  // its detections in its own pixels, or the error it hit (a frame that cannot be preprocessed
  // fails alone; an inference error fails the whole batch). With the model on a GPU the frames
  // are preprocessed there, straight into the device input.
  std::vector<Result<std::vector<Detection>>> detect(std::span<const DecodedFrame* const> frames);
  int max_batch() const { return detector_->max_batch(); }

  // Class ids for label names; an unknown name is an error listing a few known ones.
  Result<std::vector<int>> class_ids(const std::vector<std::string>& names) const;

  const std::string& name() const { return name_; }
  const std::vector<std::string>& labels() const { return labels_; }
  const Detector& detector() const { return *detector_; }
  int nodes_before_fusion() const { return nodes_before_; }
  int nodes_after_fusion() const { return nodes_after_; }

 private:
  ModelRunner() = default;
  std::vector<Result<std::vector<Detection>>> detect_on_gpu(std::span<const DecodedFrame* const> frames);

  std::string name_;
  std::unique_ptr<Detector> detector_;
  std::vector<std::string> labels_;
  YuvPreprocessor preprocessor_;
  std::unique_ptr<GpuYuvPreprocessor> gpu_preprocessor_;  // when the model runs on a GPU
  Tensor input_;                                          // [max_batch, ...], reused for every batch
  int nodes_before_ = 0, nodes_after_ = 0;
};

}  // namespace edgefuse
