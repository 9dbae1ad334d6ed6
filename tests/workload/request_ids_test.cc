// The duplicate-id check's parts (issue 22): ids split into text and counter, runs of
// counters, the hashed table and its confirmation by reading a line again.
#include "workload/request_ids.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <sys/stat.h>
#include <thread>

#include <gtest/gtest.h>

#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::TempFile;
using Result = CounterIds::Result;

TEST(CounterIds, SplitsAnIdIntoItsTextAndTrailingNumber) {
  struct Case {
    std::string id;
    bool counted;
    std::string text;
    int64_t number;
  };
  const Case cases[] = {
      {"17", true, "", 17},
      {"bench-17", true, "bench-", 17},
      {"r0", true, "r", 0},
      {"0", true, "", 0},
      // Leading zeros go to the text, so `007` and `7` stay different ids.
      {"req-0017", true, "req-00", 17},
      {"00", true, "0", 0},
      {"007", true, "00", 7},
      {"999999999999999999", true, "", 999'999'999'999'999'999},  // 18 digits
      {"1000000000000000000", false, "", 0},                      // 19: not counted
      {"x" + std::string(24, '0') + "1", true, "x" + std::string(24, '0'), 1},
      {"abc", false, "", 0},
      {"7a", false, "", 0},
      {"", false, "", 0},
  };
  for (const Case& c : cases) {
    const auto split = CounterIds::SplitId(c.id);
    ASSERT_EQ(split.has_value(), c.counted) << c.id;
    if (!split) continue;
    EXPECT_EQ(split->text, c.text) << c.id;
    EXPECT_EQ(split->number, c.number) << c.id;
    EXPECT_EQ(std::string(split->text) + std::to_string(split->number), c.id);  // one way only
  }
}

TEST(CounterIds, KeepsRunsOfConsecutiveNumbers) {
  CounterIds ids;
  for (const char* id : {"1", "2", "3"})
    EXPECT_EQ(ids.Add(id), Result::kAdded) << id;
  EXPECT_EQ(ids.runs(), 1u);
  EXPECT_EQ(ids.Add("5"), Result::kAdded);  // a gap: {1-3, 5}
  EXPECT_EQ(ids.runs(), 2u);
  EXPECT_EQ(ids.Add("4"), Result::kAdded);  // closes it: {1-5}
  EXPECT_EQ(ids.runs(), 1u);
  EXPECT_EQ(ids.Add("0"), Result::kAdded);  // extends the run downwards: {0-5}
  EXPECT_EQ(ids.runs(), 1u);
  for (const char* id : {"0", "3", "5"})
    EXPECT_EQ(ids.Add(id), Result::kSeen) << id;
  EXPECT_EQ(ids.Add("05"), Result::kAdded);  // text "0", not "": another id
  EXPECT_EQ(ids.Add("r5"), Result::kAdded);
  EXPECT_EQ(ids.Add("r5"), Result::kSeen);
  EXPECT_EQ(ids.runs(), 3u);
}

TEST(CounterIds, NumbersInAnyOrderEndAsOneRun) {
  std::vector<int> numbers(5000);
  std::iota(numbers.begin(), numbers.end(), 0);
  std::shuffle(numbers.begin(), numbers.end(), std::mt19937(7));
  CounterIds ids;
  for (int n : numbers)
    ASSERT_EQ(ids.Add("bench-" + std::to_string(n)), Result::kAdded) << n;
  EXPECT_EQ(ids.runs(), 1u);
  for (int n : numbers)
    ASSERT_EQ(ids.Add("bench-" + std::to_string(n)), Result::kSeen) << n;
}

TEST(CounterIds, TextsPastTheLimitAreLeftToTheHashedTable) {
  CounterIds ids;
  for (std::size_t t = 0; t < CounterIds::kMaxCounterTexts; ++t)
    ASSERT_EQ(ids.Add("t" + std::to_string(t) + "-1"), Result::kAdded);
  // A text first seen after the limit is never counted, so its ids are always hashed.
  EXPECT_EQ(ids.Add("late-1"), Result::kNotCounted);
  EXPECT_EQ(ids.Add("late-1"), Result::kNotCounted);
  EXPECT_EQ(ids.Add("t0-1"), Result::kSeen);
  EXPECT_EQ(ids.Add("t0-2"), Result::kAdded);
}

TEST(CounterIds, ATextWithScatteredNumbersIsFrozenAndStillLookedIn) {
  CounterIds ids;
  // Even numbers only: one run each. The 4,097th run is one per id, past one per 4.
  for (int n = 0; n < 2 * 4097; n += 2)
    ASSERT_EQ(ids.Add("t" + std::to_string(n)), Result::kAdded) << n;
  EXPECT_EQ(ids.runs(), 4097u);
  EXPECT_EQ(ids.Add("t100"), Result::kSeen);        // still found
  EXPECT_EQ(ids.Add("t101"), Result::kNotCounted);  // new numbers go to the caller
  EXPECT_EQ(ids.Add("t101"), Result::kNotCounted);  // every time (the caller finds it)
  EXPECT_EQ(ids.Add("t100000"), Result::kNotCounted);
  EXPECT_EQ(ids.runs(), 4097u);
  EXPECT_EQ(ids.Add("u1"), Result::kAdded);  // other texts are not frozen
}

// What each line "used": a stand-in for reading the trace again.
struct FakeTrace {
  std::map<int, std::string> ids;
  int reads = 0;
  IdHashTable::IdOnLine reader() {
    return [this](int line) -> std::optional<std::string> {
      ++reads;
      return ids.at(line);
    };
  }
};

using Keep = IdHashTable::Keep;

TEST(IdHashTable, FindsTheLineOfAnIdSeenBefore) {
  FakeTrace trace;
  IdHashTable table(Keep::kLines);
  const char* ids[] = {"a", "b", "c9f2-x", "b"};
  for (int line = 1; line <= 3; ++line) {
    trace.ids[line] = ids[line - 1];
    EXPECT_FALSE(table.Add(ids[line - 1], line, trace.reader()));
  }
  const auto earlier = table.Add("b", 4, trace.reader());
  ASSERT_TRUE(earlier);
  EXPECT_EQ(earlier->line, 2);
  EXPECT_TRUE(earlier->compared);
  EXPECT_EQ(trace.reads, 1);  // only the equal bits were read again
  EXPECT_EQ(table.size(), 3u);
}

TEST(IdHashTable, EqualBitsOfAnotherIdAreNoDuplicate) {
  // Line 1 used "a"; reading it again says "z", as it would if "a" and "z" shared the
  // kept bits. The table must keep both and still find either.
  FakeTrace trace;
  IdHashTable table(Keep::kLines);
  trace.ids[1] = "z";
  EXPECT_FALSE(table.Add("a", 1, trace.reader()));
  trace.ids[2] = "a";
  EXPECT_FALSE(table.Add("a", 2, trace.reader()));  // compared with line 1: another id
  EXPECT_EQ(table.size(), 2u);
  const auto earlier = table.Add("a", 3, trace.reader());
  ASSERT_TRUE(earlier);
  EXPECT_EQ(earlier->line, 2);
  EXPECT_TRUE(earlier->compared);
}

TEST(IdHashTable, ALineThatCannotBeReadAgainTrustsTheBits) {
  IdHashTable table(Keep::kLines);
  const IdHashTable::IdOnLine unreadable = [](int) { return std::nullopt; };
  EXPECT_FALSE(table.Add("x-1f", 1, unreadable));
  const auto earlier = table.Add("x-1f", 2, unreadable);
  ASSERT_TRUE(earlier);
  EXPECT_EQ(earlier->line, 1);
  EXPECT_FALSE(earlier->compared);
}

TEST(IdHashTable, APipesTableKeepsWholeHashesAndNoLines) {
  IdHashTable table(Keep::kHashes);
  int reads = 0;
  const IdHashTable::IdOnLine reader = [&](int) -> std::optional<std::string> {
    ++reads;
    return std::nullopt;
  };
  EXPECT_FALSE(table.Add("x-1f", 1, reader));
  EXPECT_FALSE(table.Add("y-1f", 2, reader));
  const auto earlier = table.Add("x-1f", 3, reader);
  ASSERT_TRUE(earlier);
  EXPECT_EQ(earlier->line, 0);  // not known
  EXPECT_FALSE(earlier->compared);
  EXPECT_EQ(reads, 0);
}

TEST(IdHashTable, GrowsByDoublingEachPartAndKeepsEveryId) {
  for (Keep keep : {Keep::kLines, Keep::kHashes}) {
    FakeTrace trace;
    IdHashTable table(keep);
    const int n = 100'000;
    for (int line = 1; line <= n; ++line) {
      trace.ids[line] = "id-" + std::to_string(line) + "x";
      ASSERT_FALSE(table.Add(trace.ids[line], line, trace.reader())) << line;
    }
    EXPECT_EQ(table.size(), static_cast<std::size_t>(n));
    // Every part at most 3/4 full, and at least 3/8 once it has grown: 100,000 ids take
    // between 133,334 and 266,667 slots (8 bytes each).
    EXPECT_GE(table.capacity(), 133'334u);
    EXPECT_LE(table.capacity(), 266'667u);
    // Lines are read again only for equal kept bits: a handful in 100,000.
    EXPECT_LT(trace.reads, 100);
    for (int line = 1; line <= n; line += 997) {
      const auto earlier = table.Add(trace.ids[line], n + 1, trace.reader());
      ASSERT_TRUE(earlier) << line;
      EXPECT_EQ(earlier->line, keep == Keep::kLines ? line : 0);
    }
  }
}

TEST(LineRereader, ReadsAnyLineAgainInAnyOrder) {
  std::string text;
  for (int i = 1; i <= 600; ++i)
    text += "line " + std::to_string(i) + (i < 600 ? "\n" : "");  // no newline at the end
  TempFile file("t.txt", text);
  LineRereader again(file.path());
  EXPECT_EQ(again.Line(600), "line 600");
  EXPECT_EQ(again.Line(1), "line 1");
  EXPECT_EQ(again.Line(257), "line 257");
  EXPECT_EQ(again.Line(256), "line 256");
  EXPECT_EQ(again.Line(513), "line 513");
  EXPECT_FALSE(again.Line(601));
  EXPECT_FALSE(again.Line(0));
  EXPECT_EQ(again.FirstLine([](int, std::string& t) { return t.find("42") != std::string::npos; }),
            42);
}

TEST(LineRereader, AFileEndingOnAStrideBoundaryHasNoLinesPastIt) {
  std::string text;
  for (int i = 1; i <= LineRereader::kStride; ++i)
    text += std::to_string(i) + "\n";
  TempFile file("t.txt", text);
  LineRereader again(file.path());
  EXPECT_FALSE(again.Line(LineRereader::kStride + 1));
  EXPECT_EQ(again.Line(LineRereader::kStride), std::to_string(LineRereader::kStride));
}

TEST(LineRereader, APipeCannotBeReadAgain) {
  TempFile dir("unused", "");
  const std::string fifo = (dir.dir() / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  LineRereader again(fifo);  // must not open (and so block on) the pipe
  EXPECT_FALSE(again.Line(1));
  EXPECT_FALSE(again.FirstLine([](int, std::string&) { return true; }));
}

}  // namespace
}  // namespace fleetsim
