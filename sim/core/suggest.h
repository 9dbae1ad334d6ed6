// "Did you mean ...?": the known name closest to a mistyped one, for the errors of
// unknown subcommands, options and config keys.
//
//   ClosestName("horizn", {"horizon", "threads"})   -> "horizon"
//   ClosestName("colour", {"policy", "count"})      -> nullopt (nothing close)
//   DidYouMean("horizn", names)                     -> " (did you mean 'horizon'?)" or ""
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

// Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`, ASCII case
// folded.
std::size_t EditDistance(std::string_view a, std::string_view b);

// The candidate fewest edits away, if it is close: at most a third of the longer name's
// length (at least 1, at most 3), ties to the earlier candidate. nullopt otherwise.
std::optional<std::string> ClosestName(std::string_view word,
                                       const std::vector<std::string_view>& candidates);

// " (did you mean 'NAME'?)" when a candidate is close, else "".
std::string DidYouMean(std::string_view word, const std::vector<std::string_view>& candidates);

}  // namespace fleetsim
