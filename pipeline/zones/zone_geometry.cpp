#include "pipeline/zones/zone_geometry.h"

#include <algorithm>

namespace edgefuse {
namespace {

double cross(Point a, Point b, Point p) {
  return (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x);
}

}  // namespace

Point anchor_point(const Box& box, int width, int height) {
  // Kept inside the frame, short of 1: polygon_contains leaves a zone's right and bottom edges out,
  // and a box touching the frame's bottom must still count in a zone drawn down to it.
  constexpr double kLast = 1 - 1e-9;
  return {std::clamp((static_cast<double>(box.x1) + box.x2) * 0.5 / width, 0.0, kLast),
          std::clamp(static_cast<double>(box.y2) / height, 0.0, kLast)};
}

bool polygon_contains(std::span<const Point> polygon, Point p) {
  bool inside = false;
  for (size_t i = 0, j = polygon.size() - 1; i < polygon.size(); j = i++) {
    const Point a = polygon[i], b = polygon[j];
    // Edges whose y-range holds p.y half-open ([min, max)), so a vertex at p.y counts once.
    if ((a.y > p.y) == (b.y > p.y)) continue;
    const double x_at = a.x + (p.y - a.y) * (b.x - a.x) / (b.y - a.y);
    if (p.x < x_at) inside = !inside;
  }
  return inside;
}

double polygon_twice_area(std::span<const Point> polygon) {
  double sum = 0;
  for (size_t i = 0, j = polygon.size() - 1; i < polygon.size(); j = i++) {
    sum += polygon[j].x * polygon[i].y - polygon[i].x * polygon[j].y;
  }
  return sum;
}

int side_of_line(Point a, Point b, Point p) {
  const double c = cross(a, b, p);
  return c > 0 ? 1 : c < 0 ? -1 : 0;
}

bool move_crosses_segment(Point from, Point to, Point a, Point b) {
  // The move meets the line at the fraction t of its length where the signed distance reaches 0;
  // the segment holds that point when its projection onto a -> b falls within [a, b].
  const double d_from = cross(a, b, from), d_to = cross(a, b, to);
  const double t = d_from / (d_from - d_to);
  const Point meet{from.x + t * (to.x - from.x), from.y + t * (to.y - from.y)};
  const double along = (meet.x - a.x) * (b.x - a.x) + (meet.y - a.y) * (b.y - a.y);
  const double length_squared = (b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y);
  return along >= 0 && along <= length_squared;
}

}  // namespace edgefuse
