// The overlay renderer on synthetic frames: box edges carry the class colour exactly where the
// detections are, zones and lines their own colours, labels and the stats corner are drawn, and
// every other pixel is untouched.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "pipeline/overlay/i420_image.h"
#include "pipeline/overlay/overlay_renderer.h"
#include "pipeline/overlay/overlay_style.h"
#include "tests/overlay/synthetic_frame.h"

namespace edgefuse {
namespace {

int floor_even(float v) {
  return static_cast<int>(std::floor(v / 2)) * 2;
}
int ceil_even(float v) {
  return static_cast<int>(std::ceil(v / 2)) * 2;
}

bool in_any(const std::vector<PixelRect>& rects, int x, int y) {
  for (const PixelRect& r : rects) {
    if (r.contains(x, y)) return true;
  }
  return false;
}

// Counts pixels of the rectangle whose Y, U and V differ from `color`.
int off_color_pixels(const I420Image& image, int x0, int y0, int x1, int y1, YuvColor color) {
  int off = 0;
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) {
      const bool same = image.plane(0)[y * image.stride(0) + x] == color.y &&
                        image.plane(1)[(y / 2) * image.stride(1) + x / 2] == color.u &&
                        image.plane(2)[(y / 2) * image.stride(2) + x / 2] == color.v;
      off += same ? 0 : 1;
    }
  }
  return off;
}

Detection detection(float x1, float y1, float x2, float y2, int class_id, float score) {
  Detection d;
  d.box = {x1, y1, x2, y2};
  d.class_id = class_id;
  d.score = score;
  return d;
}

TEST_CASE("class colours convert to studio-range YUV under BT.601 and BT.709") {
  const YuvColor green601 = to_yuv({0, 255, 0}, false);
  CHECK(green601.y == 145);
  CHECK(green601.u == 54);
  CHECK(green601.v == 34);
  const YuvColor white709 = to_yuv({255, 255, 255}, true);
  CHECK(white709.y == 235);
  CHECK(white709.u == 128);
  CHECK(white709.v == 128);
  const YuvColor red709 = to_yuv({0, 0, 255}, true);
  CHECK(red709.y == 63);
  CHECK(red709.u == 102);
  CHECK(red709.v == 240);
  CHECK(class_color(0).g == 255);  // person: green
  CHECK(class_color(12).g == class_color(0).g);
}

TEST_CASE("boxes, labels and the corner are drawn where expected and nowhere else") {
  const int width = 640, height = 360;
  const DecodedFrame frame = test::make_textured_frame(width, height, FramePixelFormat::kNV12);
  I420Image source;
  copy_to_i420(frame, source);
  I420Image canvas;
  copy_to_i420(frame, canvas);
  REQUIRE(std::memcmp(source.data(), canvas.data(), source.size()) == 0);

  const std::vector<Detection> detections = {
      detection(100.3f, 80.7f, 300.2f, 250.9f, 0, 0.87f),     detection(401.0f, 150.0f, 561.0f, 339.5f, 2, 0.5f),
      detection(-20.0f, -10.0f, 51.0f, 41.0f, 5, 0.31f),       // clipped at the top-left corner
      detection(700.0f, 10.0f, 800.0f, 50.0f, 1, 0.9f),        // wholly outside: skipped
      detection(std::nanf(""), 10.0f, 50.0f, 50.0f, 1, 0.9f),  // not a number: skipped
      detection(-1e30f, -1e30f, -1e29f, -1e29f, 1, 0.9f),      // absurd: skipped (outside)
  };
  OverlayText text;
  text.stream_name = "cam1";
  text.labels = {"person", "bicycle", "car", "motorcycle", "airplane", "bus"};
  const std::vector<PixelRect> touched = draw_overlay(canvas, detections, text, {29.97, 42.0});

  const int t = box_thickness(height);
  CHECK(t == 2);
  for (size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const Detection& d = detections[i];
    const YuvColor color = to_yuv(class_color(d.class_id), false);
    const int x1 = std::max(0, floor_even(d.box.x1)), y1 = std::max(0, floor_even(d.box.y1));
    const int x2 = std::min(width, ceil_even(d.box.x2)), y2 = std::min(height, ceil_even(d.box.y2));
    // Bottom, left and right edges (the top edge may carry the label, checked below).
    CHECK(off_color_pixels(canvas, x1, y2 - t, x2, y2, color) == 0);
    if (i < 2) {
      CHECK(off_color_pixels(canvas, x1, y1, x1 + t, y2, color) == 0);
      CHECK(off_color_pixels(canvas, x2 - t, y1, x2, y2, color) == 0);
      CHECK(off_color_pixels(canvas, x1, y1, x2, y1 + t, color) == 0);
      // Just inside and just outside the outline: the picture, not the colour.
      const int mid_y = (y1 + y2) / 2;
      CHECK(canvas.plane(0)[mid_y * canvas.stride(0) + x1 + t] == source.plane(0)[mid_y * source.stride(0) + x1 + t]);
      CHECK(canvas.plane(0)[mid_y * canvas.stride(0) + x1 - 1] == source.plane(0)[mid_y * source.stride(0) + x1 - 1]);
    }
  }

  // The labels: a filled rectangle of the class colour just above the box, with text (other luma) in it.
  const YuvColor person = to_yuv(class_color(0), false);
  bool label_found = false;
  for (const PixelRect& r : touched) {
    if (r.x == 100 && r.y + r.height == 80 && r.width > 40) {
      label_found = true;
      const int off = off_color_pixels(canvas, r.x, r.y, r.x + r.width, r.y + r.height, person);
      CHECK(off > 20);                           // the letters
      CHECK(off < r.width * r.height * 6 / 10);  // mostly background
    }
  }
  CHECK(label_found);

  // Everything drawn lies near a box (its outline, label above it) or in the top-left corner.
  const std::vector<PixelRect> allowed = {{100, 40, 260, 212}, {400, 110, 200, 230}, {0, 0, 320, 60}};
  for (const PixelRect& r : touched) {
    CAPTURE(r.x);
    CAPTURE(r.y);
    CHECK((r.width > 0 && r.height > 0 && r.x >= 0 && r.y >= 0 && r.x + r.width <= width && r.y + r.height <= height));
    bool inside = false;
    for (const PixelRect& a : allowed) {
      inside =
          inside || (r.x >= a.x && r.y >= a.y && r.x + r.width <= a.x + a.width && r.y + r.height <= a.y + a.height);
    }
    CHECK(inside);
  }

  // Untouched: every luma pixel outside the drawn rectangles, and every chroma sample none of whose
  // four luma pixels was drawn on.
  int changed_outside = 0, unchanged_total = 0;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      if (in_any(touched, x, y)) continue;
      ++unchanged_total;
      changed_outside += canvas.plane(0)[y * canvas.stride(0) + x] != source.plane(0)[y * source.stride(0) + x];
    }
  }
  for (int y = 0; y < height / 2; ++y) {
    for (int x = 0; x < width / 2; ++x) {
      if (in_any(touched, 2 * x, 2 * y) || in_any(touched, 2 * x + 1, 2 * y) || in_any(touched, 2 * x, 2 * y + 1) ||
          in_any(touched, 2 * x + 1, 2 * y + 1)) {
        continue;
      }
      for (int p = 1; p <= 2; ++p) {
        changed_outside += canvas.plane(p)[y * canvas.stride(p) + x] != source.plane(p)[y * source.stride(p) + x];
      }
    }
  }
  CHECK(changed_outside == 0);
  CHECK(unchanged_total > width * height * 3 / 4);
}

TEST_CASE("zones, counting lines and masks are drawn in their colours with their counts, and nothing else") {
  const int width = 640, height = 360;
  const DecodedFrame frame = test::make_textured_frame(width, height, FramePixelFormat::kNV12);
  I420Image source, canvas;
  copy_to_i420(frame, source);
  copy_to_i420(frame, canvas);
  OverlayText text;
  // A rectangle from (160, 180) to (480, 324) and a horizontal line at y = 90 from x = 64 to 576.
  text.zones = {{"plaza", {{0.25, 0.5}, {0.75, 0.5}, {0.75, 0.9}, {0.25, 0.9}}, {}}};
  text.lines = {{"door", {0.1, 0.25}, {0.9, 0.25}, {}}};
  // A mask from (32, 18) to (128, 72).
  text.masks = {{"hedge", {{0.05, 0.05}, {0.2, 0.05}, {0.2, 0.2}, {0.05, 0.2}}, {}}};
  OverlayStats stats;
  stats.zone_objects = {3};
  stats.line_crossings = {{{7, 2}}};
  const std::vector<PixelRect> touched = draw_overlay(canvas, {}, text, stats);

  const YuvColor zone = to_yuv(kZoneColor, false), line = to_yuv(kLineColor, false);
  const YuvColor mask = to_yuv(kMaskColor, false);
  const auto luma = [&](const I420Image& image, int x, int y) { return image.plane(0)[y * image.stride(0) + x]; };
  // On the outline (away from the label at its top-left corner) and on the line: their colours.
  CHECK(off_color_pixels(canvas, 300, 324, 340, 325, zone) == 0);  // bottom edge
  CHECK(off_color_pixels(canvas, 480, 250, 481, 300, zone) == 0);  // right edge
  CHECK(off_color_pixels(canvas, 300, 90, 500, 91, line) == 0);
  CHECK(off_color_pixels(canvas, 60, 72, 120, 73, mask) == 0);   // bottom edge
  CHECK(off_color_pixels(canvas, 128, 40, 129, 70, mask) == 0);  // right edge
  // Inside the zone, and beside the line's ends: the picture.
  for (const auto& [x, y] :
       {std::pair{320, 250}, std::pair{200, 300}, std::pair{40, 90}, std::pair{600, 90}, std::pair{80, 50}}) {
    CAPTURE(x);
    CAPTURE(y);
    CHECK(luma(canvas, x, y) == luma(source, x, y));
  }
  // Labels: the name and count in a filled box at the zone's top corner and the line's first point.
  int zone_labels = 0, line_labels = 0, mask_labels = 0;
  for (const PixelRect& r : touched) {
    if (r.x == 160 && r.y == 180 && r.width > 40 && r.height < 40) ++zone_labels;
    if (r.x == 64 && r.y == 90 && r.width > 100 && r.height < 40) ++line_labels;
    if (r.x == 32 && r.y == 18 && r.width > 20 && r.height < 40) ++mask_labels;
  }
  CHECK(zone_labels == 1);
  CHECK(mask_labels == 1);
  CHECK(line_labels == 1);  // wider: "door fwd 7 back 2"
  // Nothing outside the drawn rectangles changed.
  int changed_outside = 0;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      if (!in_any(touched, x, y)) changed_outside += luma(canvas, x, y) != luma(source, x, y);
    }
  }
  CHECK(changed_outside == 0);
}

TEST_CASE("NV12 and I420 frames of the same picture give the same overlay") {
  const DecodedFrame nv12 = test::make_textured_frame(322, 182, FramePixelFormat::kNV12);
  const DecodedFrame i420 = test::make_textured_frame(322, 182, FramePixelFormat::kI420);
  I420Image a, b;
  copy_to_i420(nv12, a);
  copy_to_i420(i420, b);
  const std::vector<Detection> detections = {detection(10, 20, 200, 150, 3, 0.7f)};
  const OverlayText text{"s", {}};
  draw_overlay(a, detections, text, {10, 5});
  draw_overlay(b, detections, text, {10, 5});
  REQUIRE(a.size() == b.size());
  CHECK(std::memcmp(a.data(), b.data(), a.size()) == 0);
  // The bottom edge, in the colour of class 3 (no label names: it is labelled "class_3").
  CHECK(off_color_pixels(a, 10, 148, 200, 150, to_yuv(class_color(3), false)) == 0);
}

TEST_CASE("no detections and no figures leave the frame as it was") {
  const DecodedFrame frame = test::make_textured_frame(64, 48, FramePixelFormat::kNV12);
  I420Image source, canvas;
  copy_to_i420(frame, source);
  copy_to_i420(frame, canvas);
  CHECK(draw_overlay(canvas, {}, {}, {}).empty());
  CHECK(std::memcmp(source.data(), canvas.data(), source.size()) == 0);
}

TEST_CASE("the preview keeps the aspect ratio at a width that is a multiple of 8") {
  const DecodedFrame frame = test::make_textured_frame(1920, 1080, FramePixelFormat::kNV12);
  I420Image full;
  copy_to_i420(frame, full);
  const I420Image preview = downscale_i420(full, 964);
  CHECK(preview.width() == 960);
  CHECK(preview.height() == 540);
  const std::vector<uint8_t> jpeg = encode_jpeg(preview, 80);
  REQUIRE(jpeg.size() > 100);
  CHECK(jpeg[0] == 0xFF);
  CHECK(jpeg[1] == 0xD8);
}

}  // namespace
}  // namespace edgefuse
