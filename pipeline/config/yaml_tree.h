// A YAML document read into a small tree that keeps line numbers, with the limits a config file
// from an untrusted source needs. yaml-cpp's own Node API expands aliases silently and recurses
// without bound on nesting, so the tree is built from yaml-cpp's event parser instead: events
// arrive before yaml-cpp descends into a collection, which lets the builder stop at kMaxDepth.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/status.h"

namespace edgefuse::config {

inline constexpr int kMaxDepth = 32;             // nested sequences/mappings, the root counts as 1
inline constexpr size_t kMaxScalarBytes = 4096;  // any single key or value
inline constexpr size_t kMaxDocumentBytes = 1 << 20;

struct YamlNode {
  enum class Kind { kNull, kScalar, kSequence, kMapping };
  Kind kind = Kind::kNull;
  int line = 0;                    // 1-based line where the node starts
  bool plain = false;              // scalar written without quotes: only plain scalars resolve to numbers, bools, null
  std::string scalar;              // kScalar only
  std::string key;                 // set on the values of a mapping: their key
  int key_line = 0;                // line of `key`
  std::vector<YamlNode> children;  // sequence items, or mapping values in document order

  const YamlNode* find(std::string_view child_key) const;
};

// Parses exactly one YAML document. Rejects: text over kMaxDocumentBytes, no document, more than
// one document, anchors and aliases, explicit tags, nesting deeper than kMaxDepth, scalars longer
// than kMaxScalarBytes, non-scalar or duplicate mapping keys, and syntax errors (yaml-cpp's
// message). Error messages read "<origin>: <key path>: <problem> (line N)".
Result<YamlNode> parse_yaml_tree(std::string_view text, std::string_view origin);

// "<origin>: <path>: <message> (line N)", leaving out an empty origin or path; control characters
// (a newline in a key or value) become escapes such as \n and \x01.
std::string located_message(std::string_view origin, std::string_view path, int line, std::string_view message);

}  // namespace edgefuse::config
