#include "pipeline/config/yaml_tree.h"

#include <map>
#include <sstream>
#include <utility>

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

namespace edgefuse::config {
namespace {

using Kind = YamlNode::Kind;

// Thrown from inside yaml-cpp's callbacks to stop parsing at the first offending event.
struct TreeError {
  std::string path;
  int line;
  std::string message;
};

int line_of(const YAML::Mark& mark) {
  return mark.line + 1;
}

// Builds a YamlNode tree from parser events with an explicit stack (no recursion of its own).
class TreeBuilder : public YAML::EventHandler {
 public:
  bool has_root() const { return has_root_; }
  YamlNode take_root() { return std::move(root_); }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) fail(line_of(mark), "a second YAML document ('---'); a config file holds exactly one");
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    check_properties(mark, "?", anchor);
    place(YamlNode{.kind = Kind::kNull, .line = line_of(mark)});
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override {
    fail(line_of(mark), "YAML aliases (*name) are not allowed in config files");
  }
  void OnAnchor(const YAML::Mark& mark, const std::string& /*anchor_name*/) override {
    fail(line_of(mark), "YAML anchors (&name) are not allowed in config files");
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    check_properties(mark, tag, anchor);
    if (value.size() > kMaxScalarBytes) {
      fail(line_of(mark), make_message("value of ", value.size(), " characters; the limit is ", kMaxScalarBytes));
    }
    place(YamlNode{.kind = Kind::kScalar, .line = line_of(mark), .plain = tag == "?", .scalar = value});
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    open(mark, tag, anchor, Kind::kSequence);
  }
  void OnSequenceEnd() override { stack_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    open(mark, tag, anchor, Kind::kMapping);
  }
  void OnMapEnd() override { stack_.pop_back(); }

 private:
  struct Frame {
    YamlNode* node;
    bool has_pending_key = false;  // mappings: the key of the next value has been read
    std::string pending_key;
    int pending_key_line = 0;
    std::map<std::string, int, std::less<>> key_lines;  // mappings: keys so far (a set, so huge mappings stay fast)
  };

  [[noreturn]] void fail(int line, std::string message) const { throw TreeError{current_path(), line, message}; }

  // Where the next event lands, as "streams[1].uri".
  std::string current_path() const {
    std::string path;
    auto append_key = [&path](std::string_view key) {
      if (!path.empty()) path += '.';
      path += key.substr(0, 64);
    };
    for (size_t i = 0; i < stack_.size(); ++i) {
      const Frame& frame = stack_[i];
      const bool is_last = i + 1 == stack_.size();
      if (frame.node->kind == Kind::kSequence) {
        path += make_message('[', frame.node->children.size() - (is_last ? 0 : 1), ']');
      } else if (!is_last) {
        append_key(frame.node->children.back().key);
      } else if (frame.has_pending_key) {
        append_key(frame.pending_key);
      }
    }
    return path;
  }

  void check_properties(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor) const {
    if (anchor != YAML::NullAnchor) fail(line_of(mark), "YAML anchors (&name) are not allowed in config files");
    // yaml-cpp reports "?" for untagged plain nodes and "!" for quoted scalars; anything else was written.
    if (tag != "?" && tag != "!")
      fail(line_of(mark), make_message("explicit YAML tags are not supported, got '", tag, "'"));
  }

  void open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, Kind kind) {
    check_properties(mark, tag, anchor);
    if (static_cast<int>(stack_.size()) >= kMaxDepth) {
      fail(line_of(mark), make_message("nesting deeper than ", kMaxDepth, " levels"));
    }
    YamlNode* node = place(YamlNode{.kind = kind, .line = line_of(mark)});
    stack_.push_back(Frame{.node = node});
  }

  // Attaches a finished or just-opened node under the top frame; returns it, or nullptr when it was a key.
  YamlNode* place(YamlNode node) {
    if (stack_.empty()) {
      root_ = std::move(node);
      has_root_ = true;
      return &root_;
    }
    Frame& top = stack_.back();
    YamlNode& parent = *top.node;
    if (parent.kind == Kind::kSequence) return &parent.children.emplace_back(std::move(node));
    if (top.has_pending_key) {
      node.key = std::move(top.pending_key);
      node.key_line = top.pending_key_line;
      top.has_pending_key = false;
      return &parent.children.emplace_back(std::move(node));
    }
    if (node.kind != Kind::kScalar) fail(node.line, "mapping keys must be plain words, not collections or null");
    if (const auto [first, inserted] = top.key_lines.emplace(node.scalar, node.line); !inserted) {
      fail(node.line, make_message("duplicate key \"", node.scalar, "\" (first at line ", first->second, ")"));
    }
    top.has_pending_key = true;
    top.pending_key = std::move(node.scalar);
    top.pending_key_line = node.line;
    return nullptr;
  }

  std::vector<Frame> stack_;
  YamlNode root_;
  bool has_root_ = false;
  int documents_ = 0;
};

}  // namespace

const YamlNode* YamlNode::find(std::string_view child_key) const {
  for (const YamlNode& child : children) {
    if (child.key == child_key) return &child;
  }
  return nullptr;
}

std::string located_message(std::string_view origin, std::string_view path, int line, std::string_view message) {
  std::string text;
  if (!origin.empty()) text = make_message(origin, ": ");
  if (!path.empty()) text += make_message(path, ": ");
  text += message;
  if (line > 0) text += make_message(" (line ", line, ")");
  // Control characters as escapes: a key or a quoted value may hold a newline, a broken file any
  // byte, and each problem must stay one line of the terminal or the log.
  std::string shown;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      shown += c;
    } else if (c == '\n' || c == '\t' || c == '\r') {
      shown += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      shown += {'\\', 'x', kHex[byte >> 4], kHex[byte & 15]};
    }
  }
  return shown;
}

Result<YamlNode> parse_yaml_tree(std::string_view text, std::string_view origin) {
  if (text.size() > kMaxDocumentBytes) {
    return invalid_argument(located_message(
        origin, "", 0,
        make_message("config is ", text.size(), " bytes; the limit is ", kMaxDocumentBytes, " (1 MiB)")));
  }
  std::istringstream input{std::string(text)};
  YAML::Parser parser(input);
  TreeBuilder builder;
  try {
    if (!parser.HandleNextDocument(builder)) {
      return invalid_argument(located_message(origin, "", 0, "config is empty (no YAML document)"));
    }
    (void)parser.HandleNextDocument(builder);  // throws from OnDocumentStart when a second document exists
  } catch (const TreeError& error) {
    return invalid_argument(located_message(origin, error.path, error.line, error.message));
  } catch (const YAML::Exception& error) {
    const int line = error.mark.is_null() ? 0 : error.mark.line + 1;
    return invalid_argument(located_message(origin, "", line, make_message("YAML syntax error: ", error.msg)));
  }
  if (!builder.has_root()) return invalid_argument(located_message(origin, "", 0, "config is empty"));
  return builder.take_root();
}

}  // namespace edgefuse::config
