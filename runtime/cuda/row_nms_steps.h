// Greedy non-maximum suppression on the device, after the row filter (step_kernels.h), so that
// only the rows of the detections that survive leave it. For outputs of [batch, rows, channels]
// laid out as
//   YOLOX's: per row dx, dy, log w, log h, objectness, then class scores; one row per grid cell,
//     level by level, row-major within a level (models/detect/yolox_decode.h);
//   BlazeFace's, its heads merged (models/detector/blazeface_rows.h): per row the score logit, then
//     dx, dy, w, h and keypoints; one row per anchor, grid by grid, cells row-major, each cell's
//     anchors in turn (models/detect/blazeface_decode.h);
//   YOLOv5's: per row cx, cy, w, h in input pixels, objectness, then class scores
//     (models/detect/yolov5_decode.h); YOLOv8's the same without objectness, channel-major
//     ([channels, rows]: one channel of every row contiguous; models/detect/yolov8_decode.h).
//
// Per batch element, on the n rows the filter selected (in any order):
//   GridCandidateStep  decodes each YOLOX row into a box, its best class and score (objectness
//   or                 times that class's score), AnchorCandidateStep each BlazeFace row into a
//   AnchorCandidateStep box and its score (the logit's sigmoid), BoxCandidateStep each YOLOv5 or
//   or                 YOLOv8 row into its box and best class's score (times the objectness),
//   BoxCandidateStep   with the CPU decoder's arithmetic; rows whose score is below the
//                      threshold rank last.
//   NmsRankStep        sorts them by descending score, ties by row (the CPU's stable sort of rows
//                      decoded in order), each item counting the candidates that go before it.
//   NmsMaskStep        in parallel, a bit per ordered pair (p, q > p): q overlaps p (IoU above
//                      the threshold; same class unless class-agnostic).
//   NmsSweepStep       one item per batch element: walks the order keeping a candidate unless a
//                      kept one's bit removed it, up to max_detections, as nms_per_class
//                      (models/detect/nms.h) does; each kept one ORs its mask row into the removed
//                      bits, so the walk costs kept x n / 32 word operations.
//   NmsIndexStep       rewrites the index buffer to the kept rows, best first.
// Then RowGatherStep packs those rows as before. Above kMaxNmsCandidates selected rows (a very low
// threshold on a large input), the steps leave the index as the filter made it, and the CPU runs
// NMS on every selected row: the result is the same, only the download is larger.
#pragma once

#include <cstdint>

#include "runtime/cuda/step_kernels.h"

namespace edgefuse::gpu {

inline constexpr int kMaxGridLevels = 4;
inline constexpr int64_t kMaxNmsCandidates = 4096;  // a multiple of 32: the mask's words
inline constexpr int64_t kGridBoxChannels = 5;      // dx, dy, log w, log h, objectness

// One decoded row. score < 0: below the threshold, never kept.
struct NmsCandidate {
  float x1, y1, x2, y2;
  float score;
  int32_t class_id;
  uint32_t row;
  uint32_t unused;  // 32 bytes
};

// Cells first_row .. first_row + grid_width * grid_height - 1 of the output, in row-major order.
struct GridLevel {
  int64_t first_row = 0;
  int64_t grid_width = 1;
  float stride = 1;
};

// The row filter's selected-row count of batch element b: the first word of its index part.
EF_HOST_DEVICE inline int64_t selected_rows(const uint32_t* index, int64_t b, int64_t rows) {
  const auto count = static_cast<int64_t>(index[b * (rows + 1)]);
  return count < rows ? count : rows;
}

// What every NMS step knows: the filtered output's batch and rows, and the candidates per batch
// element it suppresses among (the capacity: all rows, up to kMaxNmsCandidates, rounded to 32).
struct NmsStepShape : Operands {
  int64_t batch = 0;
  int64_t rows = 0;
  int64_t capacity = 0;
};

// The selected row that work item i = (batch element, slot) of a candidate step decodes: false
// past the element's selection, or for every slot when the selection exceeds the capacity.
EF_HOST_DEVICE inline bool slot_row(const NmsStepShape& shape, const uint32_t* index, int64_t i, uint32_t& row) {
  const int64_t b = i / shape.capacity, slot = i % shape.capacity;
  const int64_t n = selected_rows(index, b, shape.rows);
  if (n > shape.capacity || slot >= n) return false;
  row = index[b * (shape.rows + 1) + 1 + slot];
  return true;
}

// The best of `count` class scores of operand 0 at base, base + stride, ... as the CPU decoders
// pick it: the first of equal scores.
struct BestClass {
  float score;
  int32_t index;
};
EF_HOST_DEVICE inline BestClass best_class(const Operands& operands, int64_t base, int64_t stride, int64_t count) {
  BestClass best{operands.load(0, base), 0};
  for (int64_t c = 1; c < count; ++c) {
    const float v = operands.load(0, base + c * stride);
    if (v > best.score) best = BestClass{v, static_cast<int32_t>(c)};
  }
  return best;
}

// A candidate of a box centred at (cx, cy), scored below the threshold as -1 (never kept).
EF_HOST_DEVICE inline NmsCandidate centred_candidate(float cx, float cy, float half_w, float half_h, float score,
                                                     float score_threshold, int32_t class_id, uint32_t row) {
  return NmsCandidate{
      cx - half_w, cy - half_h, cx + half_w, cy + half_h, score >= score_threshold ? score : -1.0f, class_id, row, 0};
}

// Intersection over union with the arithmetic of models/detect/nms.cpp's iou(): an empty overlap
// or box has area 0, an empty union gives 0.
EF_HOST_DEVICE inline float box_area(float x1, float y1, float x2, float y2) {
  const float width = x2 - x1, height = y2 - y1;
  return width > 0 && height > 0 ? width * height : 0.0f;
}

EF_HOST_DEVICE inline float candidate_iou(const NmsCandidate& a, const NmsCandidate& b) {
  const float intersection = box_area(a.x1 > b.x1 ? a.x1 : b.x1, a.y1 > b.y1 ? a.y1 : b.y1, a.x2 < b.x2 ? a.x2 : b.x2,
                                      a.y2 < b.y2 ? a.y2 : b.y2);
  const float union_area = box_area(a.x1, a.y1, a.x2, a.y2) + box_area(b.x1, b.y1, b.x2, b.y2) - intersection;
  return union_area > 0 ? intersection / union_area : 0.0f;
}

// Whether a goes before b: higher score, then lower row.
EF_HOST_DEVICE inline bool ranks_before(const NmsCandidate& a, const NmsCandidate& b) {
  return a.score > b.score || (a.score == b.score && a.row < b.row);
}

// One item per (batch element, slot): slot k < n decodes selected row index[1 + k]. Operands: the
// output matrix, the index buffer; output: candidates [batch, capacity].
struct GridCandidateStep : NmsStepShape {
  int64_t channels = 0;
  int32_t levels = 0;
  GridLevel level[kMaxGridLevels] = {};
  float score_threshold = 0;

  EF_HOST_DEVICE int64_t count() const { return batch * capacity; }
  EF_HOST_DEVICE void run(int64_t i) const {
    uint32_t row = 0;
    if (!slot_row(*this, static_cast<const uint32_t*>(in[1]), i, row)) return;
    const int64_t base = (i / capacity * rows + row) * channels;
    const BestClass best = best_class(*this, base + kGridBoxChannels, 1, channels - kGridBoxChannels);
    const float score = load(0, base + 4) * best.score;
    int32_t l = 0;
    while (l + 1 < levels && static_cast<int64_t>(row) >= level[l + 1].first_row) ++l;
    const int64_t cell = static_cast<int64_t>(row) - level[l].first_row;
    const float s = level[l].stride;
    const float cx = (load(0, base) + static_cast<float>(cell % level[l].grid_width)) * s;
    const float cy = (load(0, base + 1) + static_cast<float>(cell / level[l].grid_width)) * s;
    const float half_w = 0.5f * expf(load(0, base + 2)) * s;
    const float half_h = 0.5f * expf(load(0, base + 3)) * s;
    static_cast<NmsCandidate*>(out)[i] =
        centred_candidate(cx, cy, half_w, half_h, score, score_threshold, best.index, row);
  }
};

// Rows whose boxes the graph decoded already (YOLOv5's rows, YOLOv8's columns: the output laid
// out as RowSelectStep's): cx, cy, w, h in input pixels, then YOLOv5's objectness, then the class
// scores. The score is the best class's (the first of equal ones), times the objectness when there
// is one, and the box centred_box's (models/detect/detection.h), as decode_yolov5 and
// decode_yolov8 compute them.
struct BoxCandidateStep : NmsStepShape {
  int64_t channels = 0;
  int64_t row_stride = 0;
  int64_t channel_stride = 1;
  bool objectness = true;  // column 4; the classes follow it (else they start there)
  float score_threshold = 0;

  EF_HOST_DEVICE int64_t count() const { return batch * capacity; }
  EF_HOST_DEVICE void run(int64_t i) const {
    uint32_t row = 0;
    if (!slot_row(*this, static_cast<const uint32_t*>(in[1]), i, row)) return;
    const int64_t base = (i / capacity) * rows * channels + static_cast<int64_t>(row) * row_stride;
    const int64_t first_class = objectness ? 5 : 4;
    const BestClass best =
        best_class(*this, base + first_class * channel_stride, channel_stride, channels - first_class);
    const float score = objectness ? load(0, base + 4 * channel_stride) * best.score : best.score;
    const float cx = load(0, base), cy = load(0, base + channel_stride);
    const float half_w = 0.5f * load(0, base + 2 * channel_stride);
    const float half_h = 0.5f * load(0, base + 3 * channel_stride);
    static_cast<NmsCandidate*>(out)[i] =
        centred_candidate(cx, cy, half_w, half_h, score, score_threshold, best.index, row);
  }
};

// Anchors on square grids, level by level (BlazeFace's 16 x 16 cells with 2 anchors each, then 8
// x 8 with 6), their centres at the cells' centres in input pixels.
struct AnchorLevel {
  int64_t first_row = 0;
  int64_t cells = 1;  // per side
  int64_t anchors_per_cell = 1;
};

// Column 0 of a BlazeFace row: the score logit; columns 1-4: the box.
inline constexpr int64_t kAnchorBoxColumn = 1;

// The score decode_blazeface gives a logit (models/detect/blazeface_decode.cpp): clamped to +-100,
// then 1 / (1 + e^-x).
EF_HOST_DEVICE inline float anchor_score(float logit) {
  const float clamped = logit < -100.0f ? -100.0f : (logit > 100.0f ? 100.0f : logit);
  return 1.0f / (1.0f + expf(-clamped));
}

// One item per (batch element, slot): slot k < n decodes selected row index[1 + k] as
// decode_blazeface does. Operands: the output matrix, the index buffer; output: candidates
// [batch, capacity], all of class 0 (BlazeFace's NMS is class-agnostic).
struct AnchorCandidateStep : NmsStepShape {
  int64_t channels = 0;
  int32_t levels = 0;
  AnchorLevel level[kMaxGridLevels] = {};
  float input_size = 0;
  float score_threshold = 0;

  EF_HOST_DEVICE int64_t count() const { return batch * capacity; }
  EF_HOST_DEVICE void run(int64_t i) const {
    uint32_t row = 0;
    if (!slot_row(*this, static_cast<const uint32_t*>(in[1]), i, row)) return;
    const int64_t base = (i / capacity * rows + row) * channels;
    const float score = anchor_score(load(0, base));
    int32_t l = 0;
    while (l + 1 < levels && static_cast<int64_t>(row) >= level[l + 1].first_row) ++l;
    const int64_t cell = (static_cast<int64_t>(row) - level[l].first_row) / level[l].anchors_per_cell;
    const auto cells = static_cast<float>(level[l].cells);
    const float anchor_x = (static_cast<float>(cell % level[l].cells) + 0.5f) / cells * input_size;
    const float anchor_y = (static_cast<float>(cell / level[l].cells) + 0.5f) / cells * input_size;
    const float cx = anchor_x + load(0, base + kAnchorBoxColumn);
    const float cy = anchor_y + load(0, base + kAnchorBoxColumn + 1);
    const float width = load(0, base + kAnchorBoxColumn + 2), height = load(0, base + kAnchorBoxColumn + 3);
    // std::max(size, 0.0f) as the CPU takes it: a NaN size stays NaN.
    const float half_w = 0.5f * (width < 0.0f ? 0.0f : width);
    const float half_h = 0.5f * (height < 0.0f ? 0.0f : height);
    static_cast<NmsCandidate*>(out)[i] = centred_candidate(cx, cy, half_w, half_h, score, score_threshold, 0, row);
  }
};

// One item per (batch element, slot): writes the slot at its place in the order. Operands: the
// index buffer, the candidates; output: the order (u32 [batch, capacity], slots best first).
struct NmsRankStep : NmsStepShape {
  EF_HOST_DEVICE int64_t count() const { return batch * capacity; }
  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t b = i / capacity, slot = i % capacity;
    const int64_t n = selected_rows(static_cast<const uint32_t*>(in[0]), b, rows);
    if (n > capacity || slot >= n) return;
    const NmsCandidate* candidates = static_cast<const NmsCandidate*>(in[1]) + b * capacity;
    const NmsCandidate& self = candidates[slot];
    int64_t rank = 0;
    for (int64_t k = 0; k < n; ++k) rank += ranks_before(candidates[k], self) ? 1 : 0;
    static_cast<uint32_t*>(out)[b * capacity + rank] = static_cast<uint32_t>(slot);
  }
};

// One item per (batch element, position p, word w): bit t of the word is set when the candidate at
// position q = 32 w + t > p overlaps the one at p. Operands: the index buffer, the candidates, the
// order; output: the mask (u32 [batch, capacity, capacity / 32]).
struct NmsMaskStep : NmsStepShape {
  float iou_threshold = 0;
  bool per_class = true;

  EF_HOST_DEVICE int64_t words() const { return capacity / 32; }
  EF_HOST_DEVICE int64_t count() const { return batch * capacity * words(); }
  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t w = i % words(), p = (i / words()) % capacity, b = i / (words() * capacity);
    const int64_t n = selected_rows(static_cast<const uint32_t*>(in[0]), b, rows);
    if (n > capacity || p >= n || w * 32 >= n) return;
    const NmsCandidate* candidates = static_cast<const NmsCandidate*>(in[1]) + b * capacity;
    const uint32_t* order = static_cast<const uint32_t*>(in[2]) + b * capacity;
    const NmsCandidate& kept = candidates[order[p]];
    uint32_t bits = 0;
    for (int64_t t = 0; t < 32; ++t) {
      const int64_t q = w * 32 + t;
      if (q <= p || q >= n) continue;
      const NmsCandidate& other = candidates[order[q]];
      if (per_class && other.class_id != kept.class_id) continue;
      if (candidate_iou(kept, other) > iou_threshold) bits |= 1u << t;
    }
    static_cast<uint32_t*>(out)[i] = bits;
  }
};

// Per batch element, the sweep's result: the kept count (kNmsNotRun when the selection was above
// the capacity), the kept positions in the order, then the removed bits.
inline constexpr uint32_t kNmsNotRun = 0xFFFFFFFFu;
EF_HOST_DEVICE inline int64_t nms_result_words(int64_t capacity) {
  return 1 + capacity + capacity / 32;
}

// One item per batch element: the greedy pass over the ordered candidates. Operands: the index
// buffer, the candidates, the order, the mask; output: the sweep's result.
struct NmsSweepStep : NmsStepShape {
  int64_t max_detections = 0;  // <= 0: all

  EF_HOST_DEVICE int64_t count() const { return batch; }
  EF_HOST_DEVICE void run(int64_t b) const {
    uint32_t* result = static_cast<uint32_t*>(out) + b * nms_result_words(capacity);
    const int64_t n = selected_rows(static_cast<const uint32_t*>(in[0]), b, rows);
    if (n > capacity) {  // the CPU suppresses among all selected rows
      result[0] = kNmsNotRun;
      return;
    }
    const NmsCandidate* candidates = static_cast<const NmsCandidate*>(in[1]) + b * capacity;
    const uint32_t* order = static_cast<const uint32_t*>(in[2]) + b * capacity;
    const int64_t words = capacity / 32, used_words = (n + 31) / 32;
    const uint32_t* mask = static_cast<const uint32_t*>(in[3]) + b * capacity * words;
    uint32_t* kept = result + 1;
    uint32_t* removed = result + 1 + capacity;
    for (int64_t w = 0; w < used_words; ++w) removed[w] = 0;
    const int64_t limit = max_detections > 0 && max_detections < n ? max_detections : n;
    int64_t count = 0;
    for (int64_t p = 0; p < n && count < limit; ++p) {
      if (!(candidates[order[p]].score >= 0)) break;  // the rest are below the threshold
      if (((removed[p / 32] >> (p % 32)) & 1u) != 0) continue;
      kept[count++] = static_cast<uint32_t>(p);
      for (int64_t w = p / 32; w < used_words; ++w) removed[w] |= mask[p * words + w];
    }
    result[0] = static_cast<uint32_t>(count);
  }
};

// One item per (batch element, slot): slot 0 writes the kept count (0 too: selected rows that all
// score below the threshold come back as none), slot k < kept the row of the k-th kept candidate.
// Operands: the sweep's result, the candidates, the order; output: the index buffer (left as the
// filter made it when the sweep did not run).
struct NmsIndexStep : NmsStepShape {
  EF_HOST_DEVICE int64_t count() const { return batch * capacity; }
  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t b = i / capacity, k = i % capacity;
    const uint32_t* result = static_cast<const uint32_t*>(in[0]) + b * nms_result_words(capacity);
    if (result[0] == kNmsNotRun) return;
    uint32_t* index = static_cast<uint32_t*>(out) + b * (rows + 1);
    if (k == 0) index[0] = result[0];
    if (k >= static_cast<int64_t>(result[0])) return;
    const NmsCandidate* candidates = static_cast<const NmsCandidate*>(in[1]) + b * capacity;
    const uint32_t* order = static_cast<const uint32_t*>(in[2]) + b * capacity;
    index[1 + k] = candidates[order[result[1 + k]]].row;
  }
};

}  // namespace edgefuse::gpu
