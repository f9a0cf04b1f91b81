// The official ONNX node tests whose ops the importer supports, run with reference and optimised
// kernels. A failure must be listed in known_failures.txt ("test_name: reason") to be expected; a
// listed test that passes is a stale entry and fails the suite, like an unlisted failure.
//
// Environment: EDGEFUSE_ONNX_NODE_TESTS overrides the test folder; EDGEFUSE_CONFORMANCE_FILTER
// runs only tests whose name contains it; EDGEFUSE_REQUIRE_ASSETS=1 makes a missing folder fail.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

#include "tests/conformance/node_test_case.h"
#include "tests/support/assets.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// "test_name: reason" per line; blank lines and lines starting with '#' are ignored.
std::map<std::string, std::string> read_known_failures(const fs::path& path) {
  std::map<std::string, std::string> known;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(':');
    const std::string name = line.substr(0, colon);
    known[name] = colon == std::string::npos ? "" : line.substr(colon + 1);
  }
  return known;
}

struct OpCounts {
  int considered = 0;
  int passed = 0;
};

}  // namespace

TEST_CASE("ONNX node test conformance") {
  const fs::path root = env_or("EDGEFUSE_ONNX_NODE_TESTS", EDGEFUSE_ONNX_NODE_TESTS_DIR);
  if (!fs::is_directory(root)) {
    if (assets_required()) FAIL("ONNX node tests missing: " << root.string() << " (install libonnx-testdata)");
    MESSAGE("SKIPPED: ONNX node tests not found at " << root.string() << " (install libonnx-testdata)");
    return;
  }
  const std::string filter = env_or("EDGEFUSE_CONFORMANCE_FILTER", "");
  const std::map<std::string, std::string> known = read_known_failures(EDGEFUSE_CONFORMANCE_KNOWN_FAILURES);

  std::vector<fs::path> folders;
  for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.find(filter) != std::string::npos) folders.push_back(entry.path());
  }
  std::sort(folders.begin(), folders.end());

  int considered = 0, passed = 0, expected_failures = 0, skipped = 0;
  std::vector<std::string> unexpected, stale;
  std::map<std::string, OpCounts> per_op;
  for (const fs::path& folder : folders) {
    const std::string name = folder.filename().string();
    const NodeTestOutcome outcome = run_node_test(folder);
    if (!outcome.supported) {
      ++skipped;
      if (known.count(name) != 0) stale.push_back(name + " (listed, but its ops are not supported)");
      continue;
    }
    ++considered;
    const bool ok = outcome.failure.empty();
    for (const std::string& op : outcome.ops) {
      ++per_op[op].considered;
      per_op[op].passed += ok ? 1 : 0;
    }
    const bool listed = known.count(name) != 0;
    if (ok) {
      ++passed;
      if (listed) stale.push_back(name + " (listed as failing, but passes)");
    } else if (listed) {
      ++expected_failures;
    } else {
      unexpected.push_back(name + ": " + outcome.failure);
    }
  }

  std::cout << "ONNX node tests: " << considered << " considered, " << passed << " passed, " << expected_failures
            << " expected failures, " << unexpected.size() << " unexpected failures, " << skipped
            << " skipped (unsupported op)\n";
  std::cout << "per op (tests using it: passed/considered):";
  for (const auto& [op, counts] : per_op) std::cout << ' ' << op << ' ' << counts.passed << '/' << counts.considered;
  std::cout << '\n';
  for (const std::string& failure : unexpected) std::cout << "UNEXPECTED FAILURE " << failure << '\n';
  for (const std::string& entry : stale) std::cout << "STALE known_failures.txt entry: " << entry << '\n';

  CHECK_MESSAGE(unexpected.empty(), unexpected.size(), " unexpected failures (listed above)");
  if (filter.empty()) CHECK_MESSAGE(stale.empty(), stale.size(), " stale known_failures.txt entries (listed above)");
}
