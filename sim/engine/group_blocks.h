// The blocks one request holds, per KV-cache group: the block at each position
// (kNullBlock where a GDN state was skipped).
//
// The first four groups' lists live inside the request -- every scheduling step reads
// every running request's block counts, and a separately allocated outer array cost one
// cache miss per request per step on a large fleet. Layouts with more groups keep the
// rest on the heap.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "engine/prefix_index.h"

namespace fleetsim {

class GroupBlocks {
 public:
  static constexpr std::size_t kInline = 4;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  void resize(std::size_t groups) {
    size_ = groups;
    if (groups > kInline) more_.resize(groups - kInline);
  }
  // Empties every list and forgets the groups.
  void clear() {
    for (std::size_t g = 0; g < size_; ++g)
      (*this)[g].clear();
    more_.clear();
    size_ = 0;
  }
  std::vector<BlockId>& operator[](std::size_t group) {
    return group < kInline ? inline_[group] : more_[group - kInline];
  }
  const std::vector<BlockId>& operator[](std::size_t group) const {
    return group < kInline ? inline_[group] : more_[group - kInline];
  }

 private:
  std::size_t size_ = 0;  // first: it shares a cache line with the first lists
  std::array<std::vector<BlockId>, kInline> inline_;
  std::vector<std::vector<BlockId>> more_;
};

}  // namespace fleetsim
