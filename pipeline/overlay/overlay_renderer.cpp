// Drawing on I420: solid rectangles written plane by plane, and text rasterised by OpenCV's
// Hershey font into the luma plane only (the label's chroma stays the class colour, which keeps
// the text readable and costs no colour conversion).
#include "pipeline/overlay/overlay_renderer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include <opencv2/imgproc.hpp>

#include "models/detect/labels.h"
#include "pipeline/overlay/overlay_style.h"

namespace edgefuse {
namespace {

constexpr int kFont = cv::FONT_HERSHEY_SIMPLEX;
constexpr uint8_t kDarkLuma = 16, kLightLuma = 235;

// Coordinates far outside any frame are clamped first: converting them to int would be undefined.
constexpr float kCoordinateLimit = 1 << 20;
int floor_even(float value) {
  return static_cast<int>(std::floor(std::clamp(value, -kCoordinateLimit, kCoordinateLimit) / 2.0f)) * 2;
}
int ceil_even(float value) {
  return static_cast<int>(std::ceil(std::clamp(value, -kCoordinateLimit, kCoordinateLimit) / 2.0f)) * 2;
}

// The rectangle clipped to the canvas and snapped outwards to even coordinates (chroma-aligned);
// width or height 0 when nothing is left.
PixelRect clip_even(const I420Image& canvas, int x0, int y0, int x1, int y1) {
  x0 = std::max(0, x0 & ~1);
  y0 = std::max(0, y0 & ~1);
  x1 = std::min(canvas.width(), x1 + (x1 & 1));
  y1 = std::min(canvas.height(), y1 + (y1 & 1));
  return {x0, y0, std::max(0, x1 - x0), std::max(0, y1 - y0)};
}

void fill(I420Image& canvas, const PixelRect& rect, YuvColor color, std::vector<PixelRect>& touched) {
  if (rect.width <= 0 || rect.height <= 0) return;
  for (int y = rect.y; y < rect.y + rect.height; ++y) {
    std::memset(canvas.plane(0) + static_cast<size_t>(y) * canvas.stride(0) + rect.x, color.y,
                static_cast<size_t>(rect.width));
  }
  const int cx0 = rect.x / 2, cx1 = (rect.x + rect.width + 1) / 2;
  const int cy0 = rect.y / 2, cy1 = (rect.y + rect.height + 1) / 2;
  for (int y = cy0; y < cy1; ++y) {
    std::memset(canvas.plane(1) + static_cast<size_t>(y) * canvas.stride(1) + cx0, color.u,
                static_cast<size_t>(cx1 - cx0));
    std::memset(canvas.plane(2) + static_cast<size_t>(y) * canvas.stride(2) + cx0, color.v,
                static_cast<size_t>(cx1 - cx0));
  }
  touched.push_back(rect);
}

struct TextMetrics {
  double scale;
  int stroke;
  int pad;
};

TextMetrics text_metrics(int frame_height) {
  const double scale = std::max(0.35, frame_height / 1080.0 * 0.75);
  return {scale, frame_height >= 900 ? 2 : 1, std::max(2, frame_height / 270)};
}

// A filled rectangle with `text` written in it, anchored at (x, y) = its top-left corner before clipping.
void draw_label(I420Image& canvas, int x, int y, const std::string& text, YuvColor background,
                std::vector<PixelRect>& touched) {
  const TextMetrics m = text_metrics(canvas.height());
  int baseline = 0;
  const cv::Size size = cv::getTextSize(text, kFont, m.scale, m.stroke, &baseline);
  const int width = size.width + 2 * m.pad, height = size.height + baseline + 2 * m.pad;
  // Keep the label inside the frame: shift it left or down rather than cutting the text.
  x = std::clamp(x, 0, std::max(0, canvas.width() - width));
  y = std::clamp(y, 0, std::max(0, canvas.height() - height));
  const PixelRect rect = clip_even(canvas, x, y, x + width, y + height);
  if (rect.width <= 0 || rect.height <= 0) return;
  fill(canvas, rect, background, touched);
  cv::Mat luma(rect.height, rect.width, CV_8UC1,
               canvas.plane(0) + static_cast<size_t>(rect.y) * canvas.stride(0) + rect.x,
               static_cast<size_t>(canvas.stride(0)));
  const uint8_t ink = background.y > 128 ? kDarkLuma : kLightLuma;
  // LINE_8, not LINE_AA: anti-aliased Hershey text costs 5x more (2.2 vs 0.4 ms for 12 labels at
  // 1080p, bench_overlay), and the preview's area downscaling smooths the edges anyway.
  cv::putText(luma, text, {m.pad, m.pad + size.height}, kFont, m.scale, cv::Scalar(ink), m.stroke, cv::LINE_8);
}

// "person 85%", or with a track "#12 person 85%".
std::string detection_text(const Detection& detection, const std::vector<std::string>& labels) {
  char score[16];
  std::snprintf(score, sizeof score, " %d%%", static_cast<int>(std::lround(detection.score * 100)));
  char track[24] = "";
  if (detection.track_id >= 0) std::snprintf(track, sizeof track, "#%lld ", static_cast<long long>(detection.track_id));
  std::string text = track;
  text.append(label_for(labels, detection.class_id)).append(score);
  return text;
}

std::string corner_text(const OverlayText& text, const OverlayStats& stats) {
  std::string line = text.stream_name;
  char part[64];
  if (stats.fps >= 0) {
    std::snprintf(part, sizeof part, "%s%.1f fps", line.empty() ? "" : "  ", stats.fps);
    line += part;
  }
  if (stats.latency_ms >= 0) {
    std::snprintf(part, sizeof part, "%s%.0f ms", line.empty() ? "" : "  ", stats.latency_ms);
    line += part;
  }
  return line;
}

// A polyline through `points` (frame fractions) on all three planes, `thickness` luma pixels wide;
// its bounding rectangle goes to `touched`.
void draw_polyline(I420Image& canvas, const std::vector<Point>& points, bool closed, YuvColor color, int thickness,
                   std::vector<PixelRect>& touched) {
  std::vector<cv::Point> luma_points, chroma_points;
  int x0 = canvas.width(), y0 = canvas.height(), x1 = 0, y1 = 0;
  for (const Point& p : points) {
    // Clamped onto the canvas, so an edge drawn along the frame's border stays visible.
    const int x = std::clamp(static_cast<int>(std::lround(p.x * canvas.width())), 0, canvas.width() - 1);
    const int y = std::clamp(static_cast<int>(std::lround(p.y * canvas.height())), 0, canvas.height() - 1);
    luma_points.emplace_back(x, y);
    chroma_points.emplace_back(x / 2, y / 2);
    x0 = std::min(x0, x), y0 = std::min(y0, y), x1 = std::max(x1, x), y1 = std::max(y1, y);
  }
  const auto plane = [&](int index, int width, int height) {
    return cv::Mat(height, width, CV_8UC1, canvas.plane(index), static_cast<size_t>(canvas.stride(index)));
  };
  cv::Mat luma = plane(0, canvas.width(), canvas.height());
  cv::polylines(luma, luma_points, closed, cv::Scalar(color.y), thickness, cv::LINE_8);
  const int chroma_thickness = std::max(1, thickness / 2);
  for (const auto& [index, value] : {std::pair{1, color.u}, std::pair{2, color.v}}) {
    cv::Mat chroma = plane(index, canvas.chroma_width(), canvas.chroma_height());
    cv::polylines(chroma, chroma_points, closed, cv::Scalar(value), chroma_thickness, cv::LINE_8);
  }
  // A thick line reaches thickness / 2 (rounded up) past its points, its chroma one sample more.
  const int reach = thickness / 2 + 3;
  touched.push_back(clip_even(canvas, x0 - reach, y0 - reach, x1 + reach + 1, y1 + reach + 1));
}

void draw_zones_and_lines(I420Image& canvas, const OverlayText& text, const OverlayStats& stats,
                          std::vector<PixelRect>& touched) {
  const int t = box_thickness(canvas.height());
  const YuvColor zone_color = to_yuv(kZoneColor, canvas.bt709), line_color = to_yuv(kLineColor, canvas.bt709);
  const YuvColor mask_color = to_yuv(kMaskColor, canvas.bt709);
  const auto label_at = [&](Point p, const std::string& label, YuvColor color) {
    draw_label(canvas, static_cast<int>(p.x * canvas.width()), static_cast<int>(p.y * canvas.height()), label, color,
               touched);
  };
  for (const ObjectMask& mask : text.masks) {  // first: a zone drawn over a mask stays readable
    draw_polyline(canvas, mask.polygon, true, mask_color, t, touched);
    label_at(mask.polygon.front(), mask.name, mask_color);
  }
  for (size_t z = 0; z < text.zones.size(); ++z) {
    const Zone& zone = text.zones[z];
    draw_polyline(canvas, zone.polygon, true, zone_color, t, touched);
    std::string label = zone.name;
    if (z < stats.zone_objects.size()) label.append(" ").append(std::to_string(stats.zone_objects[z]));
    label_at(zone.polygon.front(), label, zone_color);  // the config's first point: the user picks the place
  }
  for (size_t l = 0; l < text.lines.size(); ++l) {
    const CountingLine& line = text.lines[l];
    draw_polyline(canvas, {line.from, line.to}, false, line_color, t, touched);
    std::string label = line.name;
    if (l < stats.line_crossings.size()) {
      char counts[64];
      std::snprintf(counts, sizeof counts, " fwd %lld back %lld", static_cast<long long>(stats.line_crossings[l][0]),
                    static_cast<long long>(stats.line_crossings[l][1]));
      label += counts;
    }
    label_at(line.from, label, line_color);
  }
}

}  // namespace

int box_thickness(int frame_height) {
  return std::max(2, frame_height / 1080 * 4);
}

std::vector<PixelRect> draw_overlay(I420Image& canvas, const std::vector<Detection>& detections,
                                    const OverlayText& text, const OverlayStats& stats) {
  std::vector<PixelRect> touched;
  draw_zones_and_lines(canvas, text, stats, touched);  // first: boxes and labels go on top
  const int t = box_thickness(canvas.height());
  for (const Detection& detection : detections) {
    const Box& b = detection.box;
    if (!std::isfinite(b.x1) || !std::isfinite(b.y1) || !std::isfinite(b.x2) || !std::isfinite(b.y2)) continue;
    const PixelRect box = clip_even(canvas, floor_even(detection.box.x1), floor_even(detection.box.y1),
                                    ceil_even(detection.box.x2), ceil_even(detection.box.y2));
    if (box.width <= 0 || box.height <= 0) continue;
    const YuvColor color = to_yuv(class_color(detection.class_id), canvas.bt709);
    if (box.width <= 2 * t || box.height <= 2 * t) {
      fill(canvas, box, color, touched);
    } else {
      fill(canvas, {box.x, box.y, box.width, t}, color, touched);
      fill(canvas, {box.x, box.y + box.height - t, box.width, t}, color, touched);
      fill(canvas, {box.x, box.y + t, t, box.height - 2 * t}, color, touched);
      fill(canvas, {box.x + box.width - t, box.y + t, t, box.height - 2 * t}, color, touched);
    }
    // Above the box when there is room, else inside its top edge.
    const TextMetrics m = text_metrics(canvas.height());
    int baseline = 0;
    const std::string label = detection_text(detection, text.labels);
    const int label_height = cv::getTextSize(label, kFont, m.scale, m.stroke, &baseline).height + baseline + 2 * m.pad;
    const int label_y = box.y - label_height >= 0 ? box.y - label_height : box.y;
    draw_label(canvas, box.x, label_y, label, color, touched);
  }
  const std::string corner = corner_text(text, stats);
  if (!corner.empty()) {
    const int margin = text_metrics(canvas.height()).pad * 2;
    draw_label(canvas, margin, margin, corner, YuvColor{kDarkLuma, 128, 128}, touched);
  }
  return touched;
}

}  // namespace edgefuse
