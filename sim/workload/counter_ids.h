// The trace ids that are a text and a counter -- `17` (the line number native and
// vLLM-bench traces default to), `bench-17`, `r17`, `req-0017` -- kept as runs of
// consecutive numbers per text, so that a trace numbered in order costs one run however
// long it is. RequestIds (request_ids.h) keeps every other id hashed.
//
//   CounterIds ids;
//   ids.Add("bench-7");  // kAdded
//   ids.Add("bench-7");  // kSeen
//   ids.Add("a1b2-x");   // kNotCounted: the caller keeps it (hashed)
//
// An id splits into its text and number one way only: the number is the trailing digits
// without their leading zeros (`req-0017` is text `req-00` and 17), so two ids are equal
// exactly when their texts and numbers are. An id is counted here, or not counted and
// kept by the caller; the same id always gets the same answer, so each id is kept in one
// place and a repeat is always found:
//  - texts after the first kMaxCounterTexts are never counted (ids that only end in
//    digits, hashes say, would each bring a text of their own);
//  - a text whose numbers come scattered (more than kFreezeRuns runs, and more than one
//    run per kIdsPerRun ids: a run, a map node of about 64 bytes, would then cost more than
//    the caller's 8-byte slots) is frozen: its runs stay and are still looked in, and its
//    new numbers are not counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace fleetsim {

class CounterIds {
 public:
  static constexpr std::size_t kMaxCounterTexts = 64;
  static constexpr std::size_t kFreezeRuns = 4096;
  static constexpr std::size_t kIdsPerRun = 4;

  enum class Result { kAdded, kSeen, kNotCounted };
  Result Add(std::string_view id);

  // Runs of consecutive numbers kept, over all texts (what the ids cost: one map entry each).
  std::size_t runs() const { return runs_; }

  struct Split {
    std::string_view text;
    int64_t number = 0;
  };
  // The id as text and number; nullopt without trailing digits or with more than 18
  // significant ones.
  static std::optional<Split> SplitId(std::string_view id);

 private:
  struct Text {
    std::map<int64_t, int64_t> runs;  // first -> last of each run of consecutive numbers
    std::size_t ids = 0;
    bool frozen = false;
  };
  // False when `number` is in a run already.
  bool AddTo(Text& text, int64_t number);
  static bool Contains(const Text& text, int64_t number);

  std::map<std::string, Text, std::less<>> by_text_;
  Text* last_ = nullptr;  // the last text's entry: consecutive ids mostly share one
  std::string last_text_;
  std::size_t runs_ = 0;
};

}  // namespace fleetsim
