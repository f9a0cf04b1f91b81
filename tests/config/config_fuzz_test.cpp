// Seeded fuzzing of the config loader: a config using every section, mutated line by line and
// byte by byte (lines dropped, repeated, swapped, re-indented, values replaced by hostile tokens,
// bytes overwritten), then parsed. Every case must give a config or an error that names the file
// and, for every problem it lists, a line: no crash, no exception (the sanitizer job runs this too).
// EDGEFUSE_FUZZ_CASES scales the number of cases (a percentage).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/config/config.h"
#include "tests/config/config_test_folder.h"

using namespace edgefuse;
using edgefuse::test::ConfigFolder;

namespace {

// Every section and most keys; the files it names are the test folder's.
constexpr std::string_view kFullConfig = R"(models:
  - name: det
    path: model.onnx
    labels: coco.names
    threads: 2
    score-threshold: 0.4
    max-batch: 2
  - name: faces
    path: sub/faces.onnx
    family: blazeface
streams:
  - name: street
    uri: street.mp4
    model: det
    classes: [person, car]
    inference-interval: 2
    loop: true
    motion-gate: true
    zones:
      - name: path
        points: [[0, 0.2], [1, 0.2], [1, 0.9], [0, 0.9]]
        loiter-s: 5
    lines:
      - name: door
        points: [[0.5, 0], [0.5, 1]]
    masks:
      - name: tree
        points: [[0, 0], [0.2, 0], [0.2, 0.3]]
    filters:
      - classes: [person]
        min-area: 0.001
        max-ratio: 1.2
    snapshots: shots
  - name: door
    uri: rtsp://user:secret@127.0.0.1:8554/door
    model: faces
    rtsp-transport: udp
    watchdog-s: 5
events:
  path: events.jsonl
  tracks: true
mqtt:
  host: 127.0.0.1
  port: 1883
  topic-prefix: edge
http:
  port: 9100
stats-interval-s: 5
)";

const char* const kTokens[] = {
    "",       "-1",     "1e400", "true",  "[",     "]",    "{",        "}",
    "&a",     "*a",     "!!str", "~",     "null",  "0x10", "1.5",      "\"x\"",
    "[1, 2]", "{a: b}", "- x",   ":",     "'",     "\t",   "\xc3\x28", "\xe2\x82",
    "#",      "|",      ">",     "? key", "%YAML", "---",  "...",      "999999999999999999999",
    "nan",    ".inf",   "@"};

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

std::string mutate(std::string_view text, std::mt19937_64& rng) {
  const auto pick = [&](size_t count) { return std::uniform_int_distribution<size_t>(0, count - 1)(rng); };
  std::vector<std::string> lines = split_lines(text);
  if (lines.empty()) return std::string(text) + kTokens[pick(std::size(kTokens))];  // cut to nothing before
  const size_t at = pick(lines.size());
  switch (pick(8)) {
    case 0:  // a line dropped
      lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(at));
      break;
    case 1:  // a line repeated
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), lines[at]);
      break;
    case 2:  // two lines swapped
      std::swap(lines[at], lines[pick(lines.size())]);
      break;
    case 3: {  // a line indented differently
      const size_t shift = 1 + pick(4);
      if (pick(2) == 0) {
        lines[at].insert(0, shift, ' ');
      } else {
        lines[at].erase(0, std::min(shift, lines[at].find_first_not_of(' ')));
      }
      break;
    }
    case 4: {  // a value replaced by a hostile token
      const size_t colon = lines[at].find(": ");
      const std::string token = kTokens[pick(std::size(kTokens))];
      if (colon != std::string::npos) {
        lines[at] = lines[at].substr(0, colon + 2) + token;
      } else {
        lines[at] += token;
      }
      break;
    }
    case 5: {  // a key misspelt
      const size_t colon = lines[at].find(':');
      if (colon != std::string::npos && colon > 0) lines[at][pick(colon)] = static_cast<char>('a' + pick(26));
      break;
    }
    case 6: {                                  // bytes overwritten
      std::string joined = join_lines(lines);  // not empty: one line at least
      for (size_t flips = 1 + pick(8); flips > 0; --flips) joined[pick(joined.size())] = static_cast<char>(pick(256));
      return joined;
    }
    default: {  // cut short
      const std::string joined = join_lines(lines);
      return joined.substr(0, pick(joined.size()));
    }
  }
  return join_lines(lines);
}

int case_count(int base) {
  const char* scale = std::getenv("EDGEFUSE_FUZZ_CASES");
  return scale == nullptr ? base : std::max(1, static_cast<int>(static_cast<int64_t>(base) * std::atoi(scale) / 100));
}

}  // namespace

TEST_CASE("fuzz: mutated configs parse, or fail with errors naming the file and a line") {
  const ConfigFolder folder;
  REQUIRE(folder.parse(kFullConfig).is_ok());
  std::mt19937_64 rng(3);
  int parsed = 0, refused = 0;
  const int cases = case_count(1500);
  for (int i = 0; i < cases; ++i) {
    std::string text(kFullConfig);
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) text = mutate(text, rng);
    CAPTURE(i);
    CAPTURE(text);
    const Result<DaemonConfig> config = folder.parse(text);
    if (config.is_ok()) {
      ++parsed;
      CHECK_FALSE(config->models.empty());  // what parsed is a whole config
      CHECK_FALSE(config->streams.empty());
      continue;
    }
    ++refused;
    // One problem a line, each "test.yaml: <where>: <what> (line N)" or a syntax error with its line.
    const std::vector<std::string> problems = split_lines(config.status().message());
    REQUIRE_FALSE(problems.empty());
    for (const std::string& problem : problems) {
      if (problem.starts_with("... and ") && problem.ends_with(" more problems")) continue;  // past the cap
      CAPTURE(problem);
      CHECK(problem.rfind("test.yaml", 0) == 0);
      // Located, unless the problem is the whole file's.
      if (problem != "test.yaml: config is empty (no YAML document)")
        CHECK(problem.find("(line ") != std::string::npos);
      CHECK(std::none_of(problem.begin(), problem.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }));
    }
    // The camera password never appears, whatever broke around it.
    CHECK_MESSAGE(config.status().message().find("secret") == std::string::npos, config.status().message());
  }
  MESSAGE(parsed, " mutated configs parsed, ", refused, " refused");
  CHECK(refused > parsed);
}
