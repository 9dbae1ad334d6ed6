#include "workload/request_ids.h"

#include <utility>

#include "core/input_error.h"
#include "core/json_object.h"

namespace fleetsim {

RequestIds::RequestIds(const std::string& path, std::string id_key)
    : id_key_(std::move(id_key)),
      again_(path),
      hashed_(again_.rereadable() ? IdHashTable::Keep::kLines : IdHashTable::Keep::kHashes) {}

std::optional<std::string> RequestIds::IdOf(int line, std::string& text) const {
  // As JsonLines reads it: a byte-order mark at the file's start is not part of the line.
  if (line == 1 && text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  JsonObject object;
  std::string error;
  if (!object.Parse(text, error)) return std::nullopt;  // a blank line, or one skipped as bad
  const JsonValue* value = object.Find(id_key_);
  if (value == nullptr || value->is_null()) return std::to_string(line);
  std::string id;
  if (!value->ToText(id)) return std::nullopt;
  return id;
}

std::optional<std::string> RequestIds::IdOnLine(int line) {
  std::optional<std::string> text = again_.Line(line);
  if (!text) return std::nullopt;
  return IdOf(line, *text);
}

std::string RequestIds::CounterSeenOn(std::string_view id, int line) {
  // A counter's runs keep no lines: the first such duplicate reads the trace again for
  // the other line (earlier in arrival order; a vLLM-bench file may have it further down);
  // later ones (only under --skip-bad-lines) do not, so that skipping many costs no more
  // than one pass.
  std::optional<int> other;
  if (!searched_for_a_counter_) {
    searched_for_a_counter_ = true;
    other = again_.FirstLine(
        [&](int at, std::string& text) { return at != line && IdOf(at, text) == id; });
  }
  return other ? "also used on line " + std::to_string(*other) : "also used on another line";
}

void RequestIds::Add(std::string_view id, int line, const Fail& fail) {
  if (id.size() > kMaxRequestIdBytes) {
    fail("is " + std::to_string(id.size()) + " bytes long, more than the " +
         std::to_string(kMaxRequestIdBytes) + " an id may have: " + QuoteInput(id));
  }
  switch (counters_.Add(id)) {
    case CounterIds::Result::kAdded:
      return;
    case CounterIds::Result::kSeen:
      fail("duplicate request id " + QuoteInput(id) + " (" + CounterSeenOn(id, line) + ")");
      return;
    case CounterIds::Result::kNotCounted:
      break;
  }
  const auto earlier =
      hashed_.Add(id, line, [this](int at) -> std::optional<std::string> { return IdOnLine(at); });
  if (!earlier) return;
  if (earlier->line == 0) {
    fail("duplicate request id " + QuoteInput(id) +
         " (also used on an earlier line; a pipe cannot be read again, so by its 64-bit hash)");
  }
  fail("duplicate request id " + QuoteInput(id) + " (also used on line " +
       std::to_string(earlier->line) +
       (earlier->compared ? ")" : "; the trace changed while it was read)"));
}

}  // namespace fleetsim
