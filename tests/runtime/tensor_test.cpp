#include "runtime/tensor.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "runtime/dtype.h"
#include "runtime/npy.h"

using namespace edgefuse;

TEST_CASE("half conversion round-trips every finite half and rounds floats to nearest even") {
  int checked = 0;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const Half h{static_cast<uint16_t>(bits)};
    const float f = half_to_float(h);
    if (std::isnan(f)) {
      CHECK(std::isnan(half_to_float(float_to_half(f))));
      continue;
    }
    REQUIRE(float_to_half(f).bits == h.bits);
    ++checked;
  }
  CHECK(checked == 0x10000 - 2 * 1023);                                          // all but the NaN payloads
  CHECK(half_to_float(float_to_half(1.0f + 1.0f / 2048)) == 1.0f);               // tie rounds to even (down)
  CHECK(half_to_float(float_to_half(1.0f + 3.0f / 2048)) == 1.0f + 1.0f / 512);  // tie rounds to even (up)
  CHECK(half_to_float(float_to_half(70000.0f)) == INFINITY);
  CHECK(half_to_float(float_to_half(5.9604645e-08f)) == 5.9604645e-08f);  // smallest subnormal
  CHECK(half_to_float(float_to_half(2.0e-08f)) == 0.0f);
}

TEST_CASE("validate_shape rejects negative and overflowing shapes") {
  CHECK(validate_shape(Shape{1, 3, 416, 416}, 4).is_ok());
  CHECK(validate_shape(Shape{0, 5}, 4).is_ok());
  CHECK_FALSE(validate_shape(Shape{1, -3}, 4).is_ok());
  const Status huge = validate_shape(Shape{int64_t{1} << 32, int64_t{1} << 32}, 4);
  CHECK_FALSE(huge.is_ok());
  CHECK(huge.message().find("too large") != std::string::npos);
}

TEST_CASE("tensor storage is aligned, zeroed and shared by copies") {
  Tensor t = Tensor::empty(DType::kF32, {3, 5});
  CHECK(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment == 0);
  CHECK(t.numel() == 15);
  CHECK(t.nbytes() == 60);
  for (float v : t.values<float>()) CHECK(v == 0.0f);
  Tensor copy = t;
  copy.data<float>()[4] = 2.5f;
  CHECK(t.data<float>()[4] == 2.5f);
  Tensor deep = t.clone();
  deep.data<float>()[4] = 1.0f;
  CHECK(t.data<float>()[4] == 2.5f);
  CHECK(t.reshaped({15}).shape() == Shape{15});
  CHECK(contiguous_strides(std::vector<int64_t>{2, 3, 4}) == std::vector<int64_t>{12, 4, 1});
}

TEST_CASE("npy files round-trip every dtype and shape") {
  const auto dir = std::filesystem::temp_directory_path() / "edgefuse_npy_test";
  std::filesystem::create_directories(dir);
  for (const Shape& shape : {Shape{}, Shape{7}, Shape{2, 3, 5}}) {
    Tensor t = Tensor::empty(DType::kI64, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = i * 1000003 - 7;
    const std::string path = (dir / "t.npy").string();
    REQUIRE(write_npy(path, t).is_ok());
    auto back = read_npy(path);
    REQUIRE(back.is_ok());
    CHECK(back->desc() == t.desc());
    for (int64_t i = 0; i < t.numel(); ++i) CHECK(back->data<int64_t>()[i] == t.data<int64_t>()[i]);
  }
  Tensor f = Tensor::from_vector<float>({2, 2}, {1.5f, -2.0f, 3.25f, 0.0f});
  REQUIRE(write_npy((dir / "f.npy").string(), f).is_ok());
  auto back = read_npy((dir / "f.npy").string());
  REQUIRE(back.is_ok());
  CHECK(back->data<float>()[2] == 3.25f);
  CHECK_FALSE(read_npy((dir / "missing.npy").string()).is_ok());
  std::filesystem::remove_all(dir);
}
