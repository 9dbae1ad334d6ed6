#include "workload/counter_ids.h"

#include <iterator>

namespace fleetsim {

std::optional<CounterIds::Split> CounterIds::SplitId(std::string_view id) {
  std::size_t digits_from = id.size();
  while (digits_from > 0 && id[digits_from - 1] >= '0' && id[digits_from - 1] <= '9')
    --digits_from;
  if (digits_from == id.size()) return std::nullopt;
  // Leading zeros belong to the text; the number keeps at least one digit.
  std::size_t number_from = digits_from;
  while (number_from + 1 < id.size() && id[number_from] == '0')
    ++number_from;
  // 18 digits always fit an int64_t.
  if (id.size() - number_from > 18) return std::nullopt;
  Split split{id.substr(0, number_from), 0};
  for (std::size_t i = number_from; i < id.size(); ++i)
    split.number = split.number * 10 + (id[i] - '0');
  return split;
}

bool CounterIds::Contains(const Text& text, int64_t number) {
  auto next = text.runs.upper_bound(number);  // the first run starting after `number`
  return next != text.runs.begin() && std::prev(next)->second >= number;
}

bool CounterIds::AddTo(Text& text, int64_t number) {
  auto& runs = text.runs;
  auto next = runs.upper_bound(number);
  const bool joins_next = next != runs.end() && next->first == number + 1;
  if (next != runs.begin()) {
    const auto previous = std::prev(next);
    if (previous->second >= number) return false;
    if (previous->second == number - 1) {
      if (joins_next) {  // `number` closes the gap between two runs
        previous->second = next->second;
        runs.erase(next);
        --runs_;
      } else {
        previous->second = number;
      }
      return true;
    }
  }
  if (joins_next) {  // the next run now starts at `number`: its key changes, its node stays
    auto node = runs.extract(next);
    node.key() = number;
    runs.insert(std::move(node));
    return true;
  }
  runs.emplace_hint(next, number, number);
  ++runs_;
  return true;
}

CounterIds::Result CounterIds::Add(std::string_view id) {
  const std::optional<Split> split = SplitId(id);
  if (!split) return Result::kNotCounted;
  if (last_ == nullptr || split->text != last_text_) {
    auto found = by_text_.find(split->text);
    if (found == by_text_.end()) {
      if (by_text_.size() >= kMaxCounterTexts) return Result::kNotCounted;
      found = by_text_.emplace(std::string(split->text), Text{}).first;
    }
    last_ = &found->second;
    last_text_ = found->first;
  }
  Text& text = *last_;
  if (text.frozen) return Contains(text, split->number) ? Result::kSeen : Result::kNotCounted;
  if (!AddTo(text, split->number)) return Result::kSeen;
  ++text.ids;
  if (text.runs.size() > kFreezeRuns && text.runs.size() * kIdsPerRun > text.ids)
    text.frozen = true;
  return Result::kAdded;
}

}  // namespace fleetsim
