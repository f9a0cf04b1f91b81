// The test's exposition parser: one line at a time, a cursor over the line, strict about every
// character the grammar allows (no leniency that would hide a writer bug).
#include "tests/metrics/exposition_parser.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace edgefuse::testing {
namespace {

bool name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool name_char(char c) {
  return name_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

struct Cursor {
  const std::string& line;
  size_t at = 0;
  bool done() const { return at >= line.size(); }
  char peek() const { return done() ? '\0' : line[at]; }
  bool take(char c) {
    if (peek() != c) return false;
    ++at;
    return true;
  }
  std::string name() {
    const size_t start = at;
    if (!name_start(peek())) return "";
    while (!done() && name_char(line[at])) ++at;
    return line.substr(start, at - start);
  }
};

bool parse_value(const std::string& word, double& value) {
  if (word == "NaN") return value = std::numeric_limits<double>::quiet_NaN(), true;
  if (word == "+Inf") return value = std::numeric_limits<double>::infinity(), true;
  if (word == "-Inf") return value = -std::numeric_limits<double>::infinity(), true;
  if (word.empty() || std::isspace(static_cast<unsigned char>(word[0]))) return false;  // strtod would skip it
  char* end = nullptr;
  value = std::strtod(word.c_str(), &end);
  // strtod also takes "inf"/"nan"/hex, which Prometheus does not; refuse letters other than e/E.
  for (char c : word) {
    if (std::isalpha(static_cast<unsigned char>(c)) && c != 'e' && c != 'E') return false;
  }
  return end == word.c_str() + word.size();
}

// Unescapes \\, \n and (when allow_quote) \"; any other escape is an error.
bool unescape(const std::string& text, bool allow_quote, std::string& out) {
  out.clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (++i == text.size()) return false;
    if (text[i] == '\\') {
      out += '\\';
    } else if (text[i] == 'n') {
      out += '\n';
    } else if (text[i] == '"' && allow_quote) {
      out += '"';
    } else {
      return false;
    }
  }
  return true;
}

std::string parse_comment(const std::string& line, ParsedExposition& page) {
  Cursor cursor{line, 2};
  const size_t keyword_end = line.find(' ', 2);
  if (keyword_end == std::string::npos) return "";  // a plain comment
  const std::string keyword = line.substr(2, keyword_end - 2);
  if (keyword != "HELP" && keyword != "TYPE") return "";
  cursor.at = keyword_end + 1;
  const std::string family = cursor.name();
  if (family.empty() || !cursor.take(' ')) return keyword + " without a metric name";
  const std::string rest = line.substr(cursor.at);
  if (keyword == "HELP") {
    if (page.help.count(family)) return "second HELP for " + family;
    if (!unescape(rest, false, page.help[family])) return "bad escape in HELP";
  } else {
    if (page.type.count(family)) return "second TYPE for " + family;
    if (rest != "counter" && rest != "gauge" && rest != "histogram" && rest != "summary" && rest != "untyped") {
      return "unknown type '" + rest + "'";
    }
    page.type[family] = rest;
  }
  return "";
}

std::string parse_sample(const std::string& line, ParsedExposition& page) {
  Cursor cursor{line};
  ParsedSample sample;
  sample.name = cursor.name();
  if (sample.name.empty()) return "sample without a name";
  if (cursor.take('{')) {
    while (!cursor.take('}')) {
      const std::string label = cursor.name();
      if (label.empty() || label.find(':') != std::string::npos) return "bad label name";
      if (!cursor.take('=') || !cursor.take('"')) return "expected =\" after label " + label;
      std::string raw;
      while (!cursor.done() && cursor.peek() != '"') {
        if (cursor.peek() == '\\') raw += line[cursor.at++];
        if (cursor.done()) return "unterminated label value";
        raw += line[cursor.at++];
      }
      if (!cursor.take('"')) return "unterminated label value";
      if (!unescape(raw, true, sample.labels[label])) return "bad escape in label " + label;
      if (cursor.peek() == ',') {
        cursor.take(',');
        if (cursor.peek() == '}') return "trailing comma";
      } else if (cursor.peek() != '}') {
        return "expected , or } after label " + label;
      }
    }
  }
  if (!cursor.take(' ')) return "expected one space before the value";
  const std::string value = line.substr(cursor.at);
  if (!parse_value(value, sample.value)) return "bad value '" + value + "'";
  page.samples.push_back(std::move(sample));
  return "";
}

}  // namespace

ParsedExposition parse_exposition(const std::string& text) {
  ParsedExposition page;
  if (!text.empty() && text.back() != '\n') page.error = "text does not end with a newline";
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line) && page.error.empty();) {
    ++number;
    if (line.empty()) continue;
    const std::string why = line[0] == '#' ? parse_comment(line, page) : parse_sample(line, page);
    if (!why.empty()) page.error = "line " + std::to_string(number) + ": " + why;
  }
  return page;
}

double sample_value(const ParsedExposition& page, const std::string& name,
                    const std::map<std::string, std::string>& labels) {
  for (const auto& sample : page.samples) {
    if (sample.name == name && sample.labels == labels) return sample.value;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace edgefuse::testing
