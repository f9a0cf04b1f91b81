#include "pipeline/zones/zone_geometry.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

using namespace edgefuse;

TEST_CASE("zone geometry: the anchor is the bottom centre of the box, in frame fractions") {
  const Point p = anchor_point(Box{100, 200, 300, 600}, 1000, 800);
  CHECK(p.x == doctest::Approx(0.2));
  CHECK(p.y == doctest::Approx(0.75));
  // A box touching (or, unclipped, leaving) the frame's bottom right is in a zone drawn to that corner.
  const std::vector<Point> bottom_right = {{0.5, 0.5}, {1, 0.5}, {1, 1}, {0.5, 1}};
  CHECK(polygon_contains(bottom_right, anchor_point(Box{900, 700, 1000, 800}, 1000, 800)));
  CHECK(polygon_contains(bottom_right, anchor_point(Box{980, 700, 1100, 900}, 1000, 800)));
}

TEST_CASE("zone geometry: inside a concave polygon, by the even-odd rule") {
  // An L: the square [0,1]^2 less its top-right quarter.
  const std::vector<Point> l_shape = {{0, 0}, {0.5, 0}, {0.5, 0.5}, {1, 0.5}, {1, 1}, {0, 1}};
  CHECK(polygon_contains(l_shape, {0.25, 0.25}));
  CHECK(polygon_contains(l_shape, {0.75, 0.75}));
  CHECK(polygon_contains(l_shape, {0.25, 0.75}));
  CHECK_FALSE(polygon_contains(l_shape, {0.75, 0.25}));  // the notch
  CHECK_FALSE(polygon_contains(l_shape, {1.5, 0.75}));
  CHECK_FALSE(polygon_contains(l_shape, {-0.1, 0.5}));
  // A ray from (0.25, 0.5) passes through the vertex (0.5, 0.5): counted once, still inside.
  CHECK(polygon_contains(l_shape, {0.25, 0.5}));
  CHECK(polygon_twice_area(l_shape) == doctest::Approx(2 * 0.75));
  // All on one line: no area (the config rejects such zones).
  CHECK(polygon_twice_area(std::vector<Point>{{0, 0}, {0.5, 0.5}, {1, 1}}) == 0);
}

TEST_CASE("zone geometry: a point on an edge two zones share belongs to exactly one of them") {
  const std::vector<Point> left = {{0, 0}, {0.5, 0}, {0.5, 1}, {0, 1}};
  const std::vector<Point> right = {{0.5, 0}, {1, 0}, {1, 1}, {0.5, 1}};
  const std::vector<Point> top = {{0, 0}, {1, 0}, {1, 0.5}, {0, 0.5}};
  const std::vector<Point> bottom = {{0, 0.5}, {1, 0.5}, {1, 1}, {0, 1}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> along(0.01, 0.99);
  for (int i = 0; i < 200; ++i) {
    const Point vertical_edge{0.5, along(rng)}, horizontal_edge{along(rng), 0.5};
    CHECK(polygon_contains(left, vertical_edge) != polygon_contains(right, vertical_edge));
    CHECK(polygon_contains(top, horizontal_edge) != polygon_contains(bottom, horizontal_edge));
  }
}

TEST_CASE("zone geometry: sides of a line and moves across a segment") {
  // Drawn left to right: below it (larger y on the image) is its right side.
  const Point a{0.2, 0.5}, b{0.8, 0.5};
  CHECK(side_of_line(a, b, {0.5, 0.7}) == 1);
  CHECK(side_of_line(a, b, {0.5, 0.3}) == -1);
  CHECK(side_of_line(a, b, {0.9, 0.5}) == 0);
  CHECK(move_crosses_segment({0.5, 0.3}, {0.5, 0.7}, a, b));
  CHECK(move_crosses_segment({0.2, 0.3}, {0.2, 0.7}, a, b));        // through the end point
  CHECK_FALSE(move_crosses_segment({0.9, 0.3}, {0.9, 0.7}, a, b));  // beside the segment
  // Diagonal moves: the meeting point decides, not where the move starts or ends.
  CHECK(move_crosses_segment({0.0, 0.3}, {0.4, 0.7}, a, b));        // meets at x = 0.2
  CHECK_FALSE(move_crosses_segment({0.0, 0.4}, {0.3, 0.7}, a, b));  // meets at x = 0.1
}
