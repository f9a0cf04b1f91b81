#include "pipeline/motion/motion_gate.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

using namespace edgefuse;

namespace {

using Clock = MotionGate::Clock;

// A grey I420-sized luma plane with a pattern, wrapped as a frame (the gate reads luma only).
struct Picture {
  int width, height;
  std::vector<uint8_t> luma;

  Picture(int w, int h) : width(w), height(h), luma(static_cast<size_t>(w) * static_cast<size_t>(h)) {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) at(x, y) = static_cast<uint8_t>(60 + (x * 7 + y * 3) % 120);  // texture
    }
  }
  uint8_t& at(int x, int y) { return luma[static_cast<size_t>(y) * static_cast<size_t>(width) + x]; }
  void fill(int x0, int y0, int w, int h, int value) {
    for (int y = y0; y < y0 + h; ++y) {
      for (int x = x0; x < x0 + w; ++x) at(x, y) = static_cast<uint8_t>(value);
    }
  }
  DecodedFrame frame() const {
    FramePlanes planes;
    planes.data[0] = luma.data();
    planes.stride[0] = width;
    return DecodedFrame(nullptr, FramePixelFormat::kI420, width, height, planes);
  }
};

}  // namespace

TEST_CASE("motion gate: the same picture is still; a moving object of enough area is motion") {
  MotionGate gate(MotionGateOptions{.min_area_percent = 0.5, .block_delta = 12, .refresh_s = 0});
  const Clock::time_point t0 = Clock::now();
  Picture picture(640, 480);                     // 80 x 60 = 4800 blocks: 0.5 % is 24 of them
  CHECK(gate.let_through(picture.frame(), t0));  // the first frame: nothing to compare with
  CHECK_FALSE(gate.let_through(picture.frame(), t0));
  CHECK(gate.last_changed_percent() == 0);

  // A 32 x 32 px patch (16 blocks, 0.33 %) appears: below the area threshold.
  Picture small = picture;
  small.fill(96, 96, 32, 32, 250);  // block-aligned
  CHECK_FALSE(gate.let_through(small.frame(), t0));
  CHECK(gate.last_changed_percent() == doctest::Approx(100.0 * 16 / 4800));
  // A 48 x 48 one (36 blocks, 0.75 %): motion, and the new reference.
  Picture large = picture;
  large.fill(96, 96, 48, 48, 250);
  CHECK(gate.let_through(large.frame(), t0));
  CHECK_FALSE(gate.let_through(large.frame(), t0));
  // It moves by 16 px: the blocks it left and the ones it reached changed.
  Picture moved = picture;
  moved.fill(112, 96, 48, 48, 250);
  CHECK(gate.let_through(moved.frame(), t0));
}

TEST_CASE("motion gate: sensor noise is not motion; slow change adds up against the reference") {
  MotionGate gate(MotionGateOptions{.min_area_percent = 0.1, .block_delta = 12, .refresh_s = 0});
  const Clock::time_point t0 = Clock::now();
  Picture picture(640, 480);
  REQUIRE(gate.let_through(picture.frame(), t0));
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> noise(-10, 10);
  for (int i = 0; i < 5; ++i) {
    Picture noisy = picture;
    for (uint8_t& v : noisy.luma) v = static_cast<uint8_t>(v + noise(rng));
    CHECK_FALSE(gate.let_through(noisy.frame(), t0));
  }
  // A region brightening by 3 levels a frame: frame to frame it never changes by 12, but against
  // the last frame let through it does on the 4th step.
  picture.fill(0, 0, 160, 120, 100);
  REQUIRE(gate.let_through(picture.frame(), t0));  // a flat region where there was texture: motion
  for (int step = 1; step <= 4; ++step) {
    Picture brighter = picture;
    brighter.fill(0, 0, 160, 120, 100 + 3 * step);
    CAPTURE(step);
    CHECK(gate.let_through(brighter.frame(), t0) == (step == 4));
  }
}

TEST_CASE("motion gate: a refresh is due after refresh_s; a new frame size goes through") {
  MotionGate gate(MotionGateOptions{.min_area_percent = 0.1, .block_delta = 12, .refresh_s = 10});
  const Clock::time_point t0 = Clock::now();
  Picture picture(320, 240);
  REQUIRE(gate.let_through(picture.frame(), t0));
  CHECK_FALSE(gate.let_through(picture.frame(), t0 + std::chrono::seconds(9)));
  CHECK(gate.let_through(picture.frame(), t0 + std::chrono::seconds(10)));
  CHECK_FALSE(gate.let_through(picture.frame(), t0 + std::chrono::seconds(11)));
  const Picture bigger(640, 480);
  CHECK(gate.let_through(bigger.frame(), t0 + std::chrono::seconds(12)));
  CHECK_FALSE(gate.let_through(bigger.frame(), t0 + std::chrono::seconds(12)));
  // Smaller than one block: nothing to judge by, so never held back.
  const Picture tiny(6, 6);
  CHECK(gate.let_through(tiny.frame(), t0 + std::chrono::seconds(13)));
  CHECK(gate.let_through(tiny.frame(), t0 + std::chrono::seconds(13)));
}
