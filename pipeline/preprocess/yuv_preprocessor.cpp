#include "pipeline/preprocess/yuv_preprocessor.h"

#include <algorithm>
#include <vector>

#include "pipeline/preprocess/colour_matrix.h"
#include "pipeline/preprocess/yuv_row_kernels.h"

namespace edgefuse {
namespace {

constexpr float kFixedPointUnit = 1.0f / 256.0f;  // blend_rows' output units

Status validate_spec(const ModelInputSpec& spec, const float* dst) {
  if (spec.width <= 0 || spec.height <= 0) {
    return invalid_argument("model input size ", spec.width, "x", spec.height, " is not positive");
  }
  if (dst == nullptr) return invalid_argument("destination tensor is null");
  return Status::ok();
}

// Everything one worker needs to produce output rows; scratch rows are its own.
class RowWriter {
 public:
  RowWriter(const YuvImage& image, const YuvResizePlan& plan, const ModelInputSpec& spec,
            const PixelTransform& transform, float* dst)
      : image_(image), plan_(plan), spec_(spec), transform_(transform), dst_(dst) {
    pad_value_ = spec.pad_pixel * spec.scale + spec.offset;
    const int resized_w = plan.letterbox.resized_w;
    luma_.resize(static_cast<size_t>(image.width));
    // One spare element after each chroma row (two for NV12's pairs): gather_columns reads the
    // right neighbour of the last column with weight 0. Zeroed so it is never uninitialised.
    chroma_.assign(static_cast<size_t>(image.width) + 2, 0);
    samples_.resize(3 * static_cast<size_t>(resized_w));
    planes_.resize(3 * static_cast<size_t>(resized_w));
    taps_ = ColumnTaps{.luma = plan.luma_columns.data(),
                       .weight = plan.column_weights.data(),
                       .chroma = plan.chroma_columns.data(),
                       .chroma_weight = plan.chroma_weights.data(),
                       .count = resized_w};
  }

  void write_rows(int64_t begin, int64_t end) {
    const Letterbox& lb = plan_.letterbox;
    for (auto row = static_cast<int>(begin); row < end; ++row) {
      const int image_row = row - lb.pad_y;
      if (image_row < 0 || image_row >= lb.resized_h) {
        pad_row(row);
      } else {
        interpolate_row(image_row);
        store_row(row);
      }
    }
  }

 private:
  void interpolate_row(int image_row) {
    const int r0 = plan_.rows[static_cast<size_t>(image_row)];
    const int weight = plan_.row_weights256[static_cast<size_t>(image_row)];
    const int width = image_.width;
    blend_rows(image_.y + static_cast<int64_t>(r0) * image_.y_stride,
               image_.y + static_cast<int64_t>(r0 + 1) * image_.y_stride, weight, width, luma_.data());
    // 4:2:0: luma rows r and r + 1 lie over chroma rows r / 2 and (r + 1) / 2 (nearest upsampling).
    const int64_t c0 = r0 >> 1;
    const int64_t c1 = (r0 + 1) >> 1;
    const uint16_t* u = chroma_.data();
    const uint16_t* v = chroma_.data() + 1;
    if (image_.format == PixelFormat::kNV12) {
      blend_rows(image_.u + c0 * image_.u_stride, image_.u + c1 * image_.u_stride, weight, width, chroma_.data());
    } else {
      const int half = width / 2;
      blend_rows(image_.u + c0 * image_.u_stride, image_.u + c1 * image_.u_stride, weight, half, chroma_.data());
      blend_rows(image_.v + c0 * image_.v_stride, image_.v + c1 * image_.v_stride, weight, half,
                 chroma_.data() + half + 1);
      v = chroma_.data() + half + 1;
    }
    gather_columns(image_.format, luma_.data(), u, v, taps_, samples_.data());
  }

  void store_row(int row) {
    const Letterbox& lb = plan_.letterbox;
    const int n = lb.resized_w;
    const uint32_t* samples = samples_.data();
    const int right = spec_.width - lb.pad_x - n;
    if (spec_.layout == TensorLayout::kNCHW) {
      const int64_t plane = static_cast<int64_t>(spec_.width) * spec_.height;
      float* row0 = dst_ + static_cast<int64_t>(row) * spec_.width;
      float* planes[3] = {row0, row0 + plane, row0 + 2 * plane};
      for (float* p : planes) {
        std::fill_n(p, lb.pad_x, pad_value_);
        std::fill_n(p + lb.pad_x + n, right, pad_value_);
      }
      const bool rgb = spec_.channels == ChannelOrder::kRGB;
      convert_to_planes(image_.format, samples, taps_, transform_, planes[rgb ? 0 : 2] + lb.pad_x, planes[1] + lb.pad_x,
                        planes[rgb ? 2 : 0] + lb.pad_x);
    } else {
      float* p = dst_ + static_cast<int64_t>(row) * spec_.width * 3;
      std::fill_n(p, 3 * lb.pad_x, pad_value_);
      std::fill_n(p + 3 * (lb.pad_x + n), 3 * right, pad_value_);
      const size_t m = static_cast<size_t>(n);
      float* r = planes_.data();
      float* g = r + m;
      float* b = g + m;
      convert_to_planes(image_.format, samples, taps_, transform_, r, g, b);
      const bool rgb = spec_.channels == ChannelOrder::kRGB;
      interleave(rgb ? r : b, g, rgb ? b : r, n, p + 3 * lb.pad_x);
    }
  }

  void pad_row(int row) {
    const int64_t width = spec_.width;
    if (spec_.layout == TensorLayout::kNHWC) {
      std::fill_n(dst_ + row * width * 3, width * 3, pad_value_);
      return;
    }
    const int64_t plane = width * spec_.height;
    for (int c = 0; c < 3; ++c) std::fill_n(dst_ + c * plane + row * width, width, pad_value_);
  }

  const YuvImage& image_;
  const YuvResizePlan& plan_;
  const ModelInputSpec& spec_;
  const PixelTransform& transform_;
  float* dst_;
  float pad_value_ = 0;
  ColumnTaps taps_;
  std::vector<uint16_t> luma_;     // vertically blended luma row
  std::vector<uint16_t> chroma_;   // vertically blended chroma: NV12 the UV row, I420 U, spare, V
  std::vector<uint32_t> samples_;  // gather_columns' output for the resized row
  std::vector<float> planes_;      // NHWC only: the row's R, G, B before interleaving
};

constexpr int64_t kRowsPerTask = 16;  // ~10 us of work: enough to amortise a task hand-out

}  // namespace

// Clamping to 0..255 commutes into clamping to the scaled bounds.
PixelTransform make_pixel_transform(YuvMatrix matrix, const ModelInputSpec& spec) {
  const YuvToRgbCoefficients c = yuv_to_rgb_coefficients(matrix);
  const float unit = kFixedPointUnit * spec.scale;
  auto bias = [&](float from_u, float from_v) {
    return (-16.0f * c.y_gain - 128.0f * (from_u + from_v)) * spec.scale + spec.offset;
  };
  PixelTransform t;
  t.y_gain = c.y_gain * unit;
  t.r_from_v = c.r_from_v * unit;
  t.g_from_u = c.g_from_u * unit;
  t.g_from_v = c.g_from_v * unit;
  t.b_from_u = c.b_from_u * unit;
  t.r_bias = bias(0, c.r_from_v);
  t.g_bias = bias(c.g_from_u, c.g_from_v);
  t.b_bias = bias(c.b_from_u, 0);
  const float black = spec.offset;
  const float white = 255.0f * spec.scale + spec.offset;
  t.lo = std::min(black, white);
  t.hi = std::max(black, white);
  return t;
}

YuvTensorStep make_yuv_tensor_step(const YuvImage& image, const YuvResizePlan& plan, const ModelInputSpec& spec,
                                   YuvMatrix matrix, float* dst) {
  const PixelTransform t = make_pixel_transform(matrix, spec);
  YuvTensorStep step;
  step.y = image.y;
  step.u = image.u;
  step.v = image.v;
  step.y_stride = image.y_stride;
  step.u_stride = image.u_stride;
  step.v_stride = image.v_stride;
  step.nv12 = image.format == PixelFormat::kNV12;
  step.luma_columns = plan.luma_columns.data();
  step.column_weights = plan.column_weights.data();
  step.chroma_columns = plan.chroma_columns.data();
  step.chroma_weights = plan.chroma_weights.data();
  step.rows = plan.rows.data();
  step.row_weights256 = plan.row_weights256.data();
  step.width = spec.width;
  step.height = spec.height;
  step.pad_x = plan.letterbox.pad_x;
  step.pad_y = plan.letterbox.pad_y;
  step.resized_w = plan.letterbox.resized_w;
  step.resized_h = plan.letterbox.resized_h;
  step.nchw = spec.layout == TensorLayout::kNCHW;
  step.rgb = spec.channels == ChannelOrder::kRGB;
  step.pad_value = spec.pad_pixel * spec.scale + spec.offset;
  step.y_gain = t.y_gain;
  step.r_from_v = t.r_from_v;
  step.g_from_u = t.g_from_u;
  step.g_from_v = t.g_from_v;
  step.b_from_u = t.b_from_u;
  step.r_bias = t.r_bias;
  step.g_bias = t.g_bias;
  step.b_bias = t.b_bias;
  step.lo = t.lo;
  step.hi = t.hi;
  step.out = dst;
  return step;
}

Result<Letterbox> YuvPreprocessor::run(const YuvImage& image, const ModelInputSpec& spec, YuvMatrix matrix, float* dst,
                                       ThreadPool* pool) {
  EF_RETURN_IF_ERROR(validate_yuv_image(image).with_context("YUV preprocessing"));
  EF_RETURN_IF_ERROR(validate_spec(spec, dst).with_context("YUV preprocessing"));
  if (!plan_ || !plan_->fits(image.format, image.width, image.height, spec)) {
    plan_ = make_yuv_resize_plan(image.format, image.width, image.height, spec);
  }
  const PixelTransform transform = make_pixel_transform(matrix, spec);
  parallel_for(pool, spec.height, kRowsPerTask, [&](int64_t begin, int64_t end) {
    RowWriter writer(image, *plan_, spec, transform, dst);
    writer.write_rows(begin, end);
  });
  return plan_->letterbox;
}

Result<Letterbox> preprocess_yuv(const YuvImage& image, const ModelInputSpec& spec, YuvMatrix matrix, float* dst,
                                 ThreadPool* pool) {
  thread_local YuvPreprocessor preprocessor;
  return preprocessor.run(image, spec, matrix, dst, pool);
}

}  // namespace edgefuse
