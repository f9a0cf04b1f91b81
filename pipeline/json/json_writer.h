// A minimal streaming JSON writer for machine-readable output (CLI reports, detection events):
// compact, one line, commas and string escaping handled, keys written in the order given.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgefuse {

// `text` as a JSON string literal, quotes included. Escapes '"', '\\' and control characters;
// other bytes (UTF-8) pass through unchanged.
std::string json_quote(std::string_view text);

// Usage: JsonWriter w; w.begin_object().key("n").value(int64_t{3}).end_object(); w.str() == "{\"n\":3}".
// Misuse (a value where a key is due, unbalanced ends) is a programmer error and asserts.
class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(int64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(bool flag);
  // Fixed-point with `decimals` (0..17) digits after the point; NaN and infinities become null.
  JsonWriter& value(double number, int decimals);
  JsonWriter& null();

  // The document so far; complete once every begin_* has its end_*.
  const std::string& str() const { return out_; }
  bool complete() const { return scopes_.empty() && !out_.empty(); }

 private:
  enum class Scope { kObject, kArray };
  void before_value();
  void open(Scope scope, char bracket);
  void close(Scope scope, char bracket);

  std::string out_;
  std::vector<Scope> scopes_;
  bool scope_has_items_ = false;  // in the innermost scope
  bool key_pending_ = false;      // a key was written and awaits its value
};

}  // namespace edgefuse
