// Draws detections and per-stream figures onto an I420 canvas, in place: the stream's masks, its
// zones and counting lines with their counts, box outlines in the class colour, a filled label (class name
// and score) above each box, and fps/latency in the top-left corner. Rectangles are snapped to even coordinates so that
// luma and the 2x2-subsampled chroma cover the same pixels (no colour fringes, and the pixels outside stay untouched).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "models/detect/detection.h"
#include "pipeline/overlay/i420_image.h"
#include "pipeline/zones/object_filter.h"
#include "pipeline/zones/zone_monitor.h"

namespace edgefuse {

struct OverlayStats {
  double fps = -1;                                     // frames processed per second for this stream; < 0: not shown
  double latency_ms = -1;                              // capture to detections; < 0: not shown
  std::vector<int> zone_objects;                       // per zone of OverlayText; empty: not shown
  std::vector<std::array<int64_t, 2>> line_crossings;  // per line: forward, backward; empty: not shown
};

struct PixelRect {
  int x = 0, y = 0, width = 0, height = 0;

  bool contains(int px, int py) const { return px >= x && px < x + width && py >= y && py < y + height; }
};

struct OverlayText {
  std::string stream_name;          // first words of the corner line; may be empty
  std::vector<std::string> labels;  // class names by class id
  std::vector<Zone> zones;          // outlined, labelled with name and objects at the first point
  std::vector<CountingLine> lines;  // drawn, labelled with name and crossings at the first point
  std::vector<ObjectMask> masks;    // outlined, labelled with name at the first point
};

// Box outline thickness for a frame height: even, 2 px up to 1079 lines, 4 px at 1080p, 8 at 2160p.
int box_thickness(int frame_height);

// Draws onto `canvas` and returns every rectangle it wrote (box edges, labels, the corner); pixels
// outside them are left as they were. Boxes are clipped to the frame; empty ones are skipped.
std::vector<PixelRect> draw_overlay(I420Image& canvas, const std::vector<Detection>& detections,
                                    const OverlayText& text, const OverlayStats& stats);

}  // namespace edgefuse
