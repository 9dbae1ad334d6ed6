#include "core/suggest.h"

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(EditDistance("run", "run"), 0u);
  EXPECT_EQ(EditDistance("rnu", "run"), 1u);         // one swap of neighbours
  EXPECT_EQ(EditDistance("horizn", "horizon"), 1u);  // one insertion
  EXPECT_EQ(EditDistance("polcy", "policy"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);  // the textbook case
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("RUN", "run"), 0u);  // case folded
}

TEST(ClosestName, TakesTheNearestCloseCandidate) {
  EXPECT_EQ(ClosestName("rnu", {"sweep", "run", "report"}), "run");
  EXPECT_EQ(ClosestName("--horizn", {"--horizon", "--threads"}), "--horizon");
  // Too far: a third of the longer name, at least one edit.
  EXPECT_EQ(ClosestName("colour", {"policy", "count"}), std::nullopt);
  EXPECT_EQ(ClosestName("xy", {"ab"}), std::nullopt);
  // The exact name is no suggestion.
  EXPECT_EQ(ClosestName("run", {"run"}), std::nullopt);
  // Ties go to the earlier candidate.
  EXPECT_EQ(ClosestName("cat", {"bat", "hat"}), "bat");
}

TEST(DidYouMean, ReadsAsAnAside) {
  EXPECT_EQ(DidYouMean("polcy", {"count", "policy"}), " (did you mean 'policy'?)");
  EXPECT_EQ(DidYouMean("zzz", {"count", "policy"}), "");
}

}  // namespace
}  // namespace fleetsim
