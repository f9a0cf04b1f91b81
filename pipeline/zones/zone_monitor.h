// Zones and counting lines over a stream's tracked detections: which zones each object stands in,
// tracks entering and leaving zones, and tracks crossing lines in either direction.
//
// An object's position is its anchor point (zone_geometry.h: the bottom centre of its box), in
// fractions of the frame, so the geometry holds whatever the stream's resolution. Occupancy needs
// no tracking; entering, leaving and crossing follow confirmed tracks (track_id >= 0):
// - a track enters a zone on the first frame its anchor is inside (its first frame included) and
//   leaves on the first frame it is outside, or when it has not been seen for more than max_age
//   processed frames (the tracker has ended it); a leave carries the seconds it stood inside
//   (dwell): from its entering frame to its leaving frame, or to the last frame it was seen on
//   when its track ended;
// - a track loiters in a zone with loiter_s > 0 on the first frame it is seen inside having
//   entered at least loiter_s seconds before: once per stay, as an alarm for someone lingering;
// - a track crosses a line when its anchor moves from one strict side of the line to the other
//   through the segment (not beside it). Its last position off the line is kept, so a walker
//   hesitating on the line counts once, and one turning back counts again, the other way.
//   Forward is from the line's left to its right as drawn from its first point to its second
//   (a line drawn left to right on the image counts downward moves as forward).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/detect/detection.h"
#include "pipeline/zones/zone_geometry.h"

namespace edgefuse {

// Detection::zone_mask has one bit per zone.
inline constexpr size_t kMaxZones = 32;
inline constexpr size_t kMaxLines = 32;

struct Zone {
  std::string name;
  std::vector<Point> polygon;  // >= 3 points, frame fractions
  std::vector<int> class_ids;  // classes it watches; empty: every class
  double loiter_s = 0;         // > 0: report tracks that stay inside this long; 0: never
};

struct CountingLine {
  std::string name;
  Point from, to;  // frame fractions
  std::vector<int> class_ids;
};

enum class CrossingDirection { kForward, kBackward };
const char* crossing_direction_name(CrossingDirection direction);  // "forward", "backward"

enum class ZoneEvent { kEnter, kLeave, kLoiter };
const char* zone_event_name(ZoneEvent event);  // "enter", "leave", "loiter"

struct ZoneTransition {
  size_t zone = 0;
  ZoneEvent event = ZoneEvent::kEnter;
  int64_t track_id = 0;
  int class_id = 0;
  double dwell_s = 0;  // leave and loiter: seconds inside (see above); enter: 0
};

struct LineCrossing {
  size_t line = 0;
  CrossingDirection direction = CrossingDirection::kForward;
  int64_t track_id = 0;
  int class_id = 0;
};

// Objects of one class standing in a zone.
struct ClassCount {
  int class_id = 0;
  int count = 0;
  bool operator==(const ClassCount&) const = default;
};

// What one processed frame brought.
struct ZoneActivity {
  std::vector<int> occupancy;                         // objects standing in each zone
  std::vector<std::vector<ClassCount>> class_counts;  // per zone: each class standing in it, by class id
  std::vector<ZoneTransition> transitions;
  std::vector<LineCrossing> crossings;
  bool has_events() const { return !transitions.empty() || !crossings.empty(); }
};

// Running totals, for metrics and the overlay.
struct ZoneTotals {
  std::vector<std::string> zone_names, line_names;
  std::vector<int> occupancy;  // on the last processed frame
  // Per zone, on the last processed frame, by class id: every class seen in the zone so far, 0
  // once it has gone (so a dashboard sees the last car leave).
  std::vector<std::vector<ClassCount>> class_counts;
  std::vector<int64_t> entries;                   // per zone
  std::vector<int64_t> loiterings;                // per zone
  std::vector<std::array<int64_t, 2>> crossings;  // per line: forward, backward
};

class ZoneMonitor {
 public:
  ZoneMonitor() = default;
  // At most kMaxZones zones and kMaxLines lines; max_age as the stream's tracker's.
  ZoneMonitor(std::vector<Zone> zones, std::vector<CountingLine> lines, int max_age);
  ZoneMonitor(ZoneMonitor&& other) noexcept;
  ZoneMonitor& operator=(ZoneMonitor&& other) noexcept;

  bool empty() const { return zones_.empty() && lines_.empty(); }
  const std::vector<Zone>& zones() const { return zones_; }
  const std::vector<CountingLine>& lines() const { return lines_; }
  // By zone_mask bit. Set once at construction, so read without the totals' lock.
  const std::vector<std::string>& zone_names() const { return totals_.zone_names; }

  // The next processed frame's detections (after tracking; boxes in pixels of a width x height
  // frame) at `seconds` of stream time (StreamClock; taken as the previous frame's if earlier):
  // sets each detection's zone_mask and returns the frame's activity. Frames in order.
  ZoneActivity update(std::span<Detection> detections, int width, int height, double seconds);

  // A copy, safe to take from another thread while update() runs.
  ZoneTotals totals() const;

 private:
  struct LineSide {
    int side = 0;  // +1 / -1: the side it was last seen strictly on; 0: not yet
    Point where;   // where it was then
  };
  struct TrackState {
    uint32_t inside = 0;    // zone bits
    uint32_t loitered = 0;  // zone bits: loitering reported during this stay
    int64_t last_seen = 0;
    double last_seen_s = 0;
    int class_id = 0;
    std::array<double, kMaxZones> entered_s{};  // per zone bit in `inside`: when the stay began
    std::vector<LineSide> lines;
  };

  void follow_track(const Detection& detection, Point anchor, ZoneActivity& activity);
  void expire_tracks(ZoneActivity& activity);

  std::vector<Zone> zones_;
  std::vector<CountingLine> lines_;
  int max_age_ = 0;
  int64_t frame_ = 0;
  double seconds_ = 0;  // the current frame's stream time
  std::unordered_map<int64_t, TrackState> tracks_;
  mutable std::mutex totals_mutex_;
  ZoneTotals totals_;
};

}  // namespace edgefuse
