// Plane geometry for zones and counting lines, in frame fractions (x, y in [0, 1], y down): where an
// object stands, whether that is inside a polygon, and whether a move crosses a line segment.
#pragma once

#include <span>

#include "models/detect/detection.h"

namespace edgefuse {

struct Point {
  double x = 0, y = 0;
  bool operator==(const Point&) const = default;
};

// Where an object stands: the bottom centre of its box (a pedestrian's feet, a car's wheels), so a
// tall box reaching over a zone's edge counts only where it touches the ground. Fractions of a
// width x height frame, kept within [0, 1) so that a box at the frame's edge is in a zone drawn to it.
Point anchor_point(const Box& box, int width, int height);

// Even-odd rule, so a self-crossing outline still has a well-defined inside. A point exactly on an
// edge two zones share belongs to one of them (the one right of or below it), never to both.
bool polygon_contains(std::span<const Point> polygon, Point p);

// Twice the signed area (shoelace): zero for a polygon whose points are all on one line.
double polygon_twice_area(std::span<const Point> polygon);

// Which side of the line from a to b point p lies on: +1 right (clockwise, seen on the image with
// y pointing down), -1 left, 0 on the line itself.
int side_of_line(Point a, Point b, Point p);

// Whether the move from `from` to `to`, which lie on strictly opposite sides of the line through
// a and b, passes between a and b (ends included) rather than beside the segment.
bool move_crosses_segment(Point from, Point to, Point a, Point b);

}  // namespace edgefuse
