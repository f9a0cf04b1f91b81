#include "pipeline/preprocess/gpu_yuv_preprocessor.h"

#if defined(EDGEFUSE_HAVE_CUDA)
#include <cstring>
#include <optional>
#include <vector>

#include "pipeline/preprocess/gpu_yuv_launch.h"
#include "pipeline/preprocess/yuv_preprocessor.h"
#include "runtime/cuda/cuda_buffers.h"
#include "runtime/cuda/cuda_device.h"
#endif

namespace edgefuse {

#if defined(EDGEFUSE_HAVE_CUDA)

namespace {

// Bytes of each plane as the decoder lays it out: whole rows, stride included.
struct PlaneSizes {
  size_t y = 0, u = 0, v = 0;
  size_t total() const { return y + u + v; }
};

PlaneSizes plane_sizes(const YuvImage& image) {
  PlaneSizes s;
  s.y = static_cast<size_t>(image.y_stride) * static_cast<size_t>(image.height);
  s.u = static_cast<size_t>(image.u_stride) * static_cast<size_t>(image.height / 2);
  s.v = image.format == PixelFormat::kI420 ? static_cast<size_t>(image.v_stride) * static_cast<size_t>(image.height / 2)
                                           : 0;
  return s;
}

// Staging for one batch element: the planes in pinned memory and on the device.
struct Slot {
  PinnedBytes staging;
  DeviceBytes planes;
  size_t capacity = 0;
};

// Appends `count` elements to the packed table bytes and returns their offset.
template <typename T>
size_t append(std::vector<std::byte>& bytes, const std::vector<T>& values) {
  const size_t offset = (bytes.size() + 63) / 64 * 64;
  bytes.resize(offset + values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data() + offset, values.data(), values.size() * sizeof(T));
  return offset;
}

}  // namespace

struct GpuYuvPreprocessor::Impl {
  std::optional<YuvResizePlan> plan;
  std::vector<std::byte> tables;  // the plan's tables packed, as uploaded
  size_t luma_columns = 0, column_weights = 0, chroma_columns = 0, chroma_weights = 0, rows = 0, row_weights = 0;
  DeviceBytes device_tables;
  size_t device_tables_capacity = 0;
  std::vector<Slot> slots;

  // Packs and uploads (on `stream`, ordered after earlier frames' kernels) a new geometry's tables.
  Status use_plan(const YuvImage& image, const ModelInputSpec& spec, cudaStream_t stream) {
    if (plan && plan->fits(image.format, image.width, image.height, spec)) return Status::ok();
    plan = make_yuv_resize_plan(image.format, image.width, image.height, spec);
    tables.clear();
    luma_columns = append(tables, plan->luma_columns);
    column_weights = append(tables, plan->column_weights);
    chroma_columns = append(tables, plan->chroma_columns);
    chroma_weights = append(tables, plan->chroma_weights);
    rows = append(tables, plan->rows);
    row_weights = append(tables, plan->row_weights256);
    if (tables.size() > device_tables_capacity) {
      EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));  // earlier kernels may still read the old tables
      EF_RETURN_IF_ERROR(device_alloc(device_tables, tables.size()));
      device_tables_capacity = tables.size();
    }
    EF_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(device_tables.get(), tables.data(), tables.size(), cudaMemcpyHostToDevice, stream));
    // `tables` must outlive the copy: it changes only with the next geometry, after a synchronise.
    EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    return Status::ok();
  }
};

GpuYuvPreprocessor::GpuYuvPreprocessor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuYuvPreprocessor::~GpuYuvPreprocessor() = default;

Result<std::unique_ptr<GpuYuvPreprocessor>> GpuYuvPreprocessor::create() {
  if (cuda_devices().empty()) return unsupported("GPU preprocessing: no CUDA device is visible");
  return std::unique_ptr<GpuYuvPreprocessor>(new GpuYuvPreprocessor(std::make_unique<Impl>()));
}

Result<Letterbox> GpuYuvPreprocessor::enqueue(const YuvImage& image, const ModelInputSpec& spec, YuvMatrix matrix,
                                              float* device_dst, void* stream, int slot_index) {
  EF_RETURN_IF_ERROR(validate_yuv_image(image).with_context("GPU YUV preprocessing"));
  if (spec.width <= 0 || spec.height <= 0) {
    return invalid_argument("GPU YUV preprocessing: model input size ", spec.width, "x", spec.height,
                            " is not positive");
  }
  if (device_dst == nullptr || slot_index < 0) return invalid_argument("GPU YUV preprocessing: no destination");
  auto* cuda_stream = static_cast<cudaStream_t>(stream);
  Impl& impl = *impl_;
  EF_RETURN_IF_ERROR(impl.use_plan(image, spec, cuda_stream));

  if (impl.slots.size() <= static_cast<size_t>(slot_index)) impl.slots.resize(static_cast<size_t>(slot_index) + 1);
  Slot& slot = impl.slots[static_cast<size_t>(slot_index)];
  const PlaneSizes sizes = plane_sizes(image);
  if (sizes.total() > slot.capacity) {
    EF_RETURN_IF_ERROR(pinned_alloc(slot.staging, sizes.total()));
    EF_RETURN_IF_ERROR(device_alloc(slot.planes, sizes.total()));
    slot.capacity = sizes.total();
  }
  auto* staging = static_cast<uint8_t*>(slot.staging.get());
  std::memcpy(staging, image.y, sizes.y);
  std::memcpy(staging + sizes.y, image.u, sizes.u);
  if (sizes.v > 0) std::memcpy(staging + sizes.y + sizes.u, image.v, sizes.v);
  EF_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(slot.planes.get(), staging, sizes.total(), cudaMemcpyHostToDevice, cuda_stream));

  auto* planes = static_cast<const uint8_t*>(slot.planes.get());
  YuvImage on_device = image;
  on_device.y = planes;
  on_device.u = planes + sizes.y;
  on_device.v = sizes.v > 0 ? planes + sizes.y + sizes.u : nullptr;
  YuvTensorStep step = make_yuv_tensor_step(on_device, *impl.plan, spec, matrix, device_dst);
  const auto* tables = static_cast<const std::byte*>(impl.device_tables.get());
  step.luma_columns = reinterpret_cast<const int32_t*>(tables + impl.luma_columns);
  step.column_weights = reinterpret_cast<const float*>(tables + impl.column_weights);
  step.chroma_columns = reinterpret_cast<const int32_t*>(tables + impl.chroma_columns);
  step.chroma_weights = reinterpret_cast<const float*>(tables + impl.chroma_weights);
  step.rows = reinterpret_cast<const int32_t*>(tables + impl.rows);
  step.row_weights256 = reinterpret_cast<const uint16_t*>(tables + impl.row_weights);
  EF_CUDA_RETURN_IF_ERROR(static_cast<cudaError_t>(launch_yuv_tensor_step(step, stream)));
  return impl.plan->letterbox;
}

#else  // a build without CUDA: there is no GPU to preprocess on

struct GpuYuvPreprocessor::Impl {};

GpuYuvPreprocessor::GpuYuvPreprocessor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuYuvPreprocessor::~GpuYuvPreprocessor() = default;

Result<std::unique_ptr<GpuYuvPreprocessor>> GpuYuvPreprocessor::create() {
  return unsupported("GPU preprocessing: this build has no CUDA");
}

Result<Letterbox> GpuYuvPreprocessor::enqueue(const YuvImage&, const ModelInputSpec&, YuvMatrix, float*, void*, int) {
  return unsupported("GPU preprocessing: this build has no CUDA");
}

#endif

}  // namespace edgefuse
