// "did you mean ...?" for misspelt keys and names.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace edgefuse::config {

// Levenshtein distance (insert, delete, substitute; each costs 1).
size_t edit_distance(std::string_view a, std::string_view b);

// `did you mean "x"?` for the closest candidate within a third of its length (at least 2 edits),
// or "" when nothing is that close.
std::string suggest(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace edgefuse::config
