// The ids of a JSON-lines trace's requests (native, vLLM-bench): at most
// kMaxRequestIdBytes bytes (the width of the /requests table's name column, so that two
// ids never merge there), and unique in the trace -- a second use is refused at its line.
//
// A trace is streamed, and memory is to grow with the requests in flight, not with the
// trace; a set of every id seen would not. So the ids seen are kept in two compact forms
// (README "Limits" gives the measured cost):
//  - an id that is a text and a counter (the line number an id defaults to, `bench-17`,
//    `r17`) as runs of consecutive numbers per text (counter_ids.h): a trace numbered in
//    order costs one run whatever its length;
//  - any other id as 32 bits of its hash and its line (id_hash_table.h), 11 to 21 bytes
//    per id; equal bits are confirmed by reading the earlier line again, so the check is
//    exact, except on a pipe, which cannot be read again: there a 64-bit hash decides.
// The other readers (Azure, Vidur, Mooncake) and the generators number their requests,
// which makes the ids unique by construction; they keep nothing.
//
//   RequestIds ids("trace.jsonl", "id");  // the trace, and the key of its ids
//   ids.Add(r.id, line, [&](const std::string& message) { lines.Fail("id", message); });
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/request_name.h"
#include "workload/counter_ids.h"
#include "workload/id_hash_table.h"
#include "workload/line_rereader.h"

namespace fleetsim {

class RequestIds {
 public:
  // `id_key`: the field that holds a line's id; a line without one has its line number.
  RequestIds(const std::string& path, std::string id_key);

  using Fail = std::function<void(const std::string& message)>;
  // Calls `fail` (which throws) when `id` is too long or an earlier line used it. Call it
  // once a line is accepted, so that a line skipped as bad (--skip-bad-lines) uses no id.
  void Add(std::string_view id, int line, const Fail& fail);

  const CounterIds& counters() const { return counters_; }
  const IdHashTable& hashed() const { return hashed_; }

 private:
  // The id of a line's text; nullopt when it is no JSON object with one.
  std::optional<std::string> IdOf(int line, std::string& text) const;
  std::optional<std::string> IdOnLine(int line);
  // Where a counter id seen before was used: "also used on line N" when it can say.
  std::string CounterSeenOn(std::string_view id, int line);

  std::string id_key_;
  bool searched_for_a_counter_ = false;
  LineRereader again_;
  CounterIds counters_;
  IdHashTable hashed_;
};

}  // namespace fleetsim
