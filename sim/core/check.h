// Invariant checks that stay on in every build (unlike `assert`, which NDEBUG removes from
// the RelWithDebInfo build the scripts make). A failed check is a bug in fleetsim, not bad
// input: it throws std::logic_error naming the file, the line, the condition and what it
// means, which the app reports as an internal error.
//
//   FLEETSIM_CHECK(block >= 0 && block < num_blocks_, "a block id inside the pool");
//   // throws "sim/engine/block_pool.cc:28: invariant failed: block >= 0 && ... (a block ...)"
#pragma once

#include <stdexcept>
#include <string>

namespace fleetsim::internal {

// Out of line and cold, so that a check costs its comparison and a not-taken branch.
[[noreturn, gnu::cold, gnu::noinline]] inline void CheckFailed(const char* file, int line,
                                                               const char* condition,
                                                               const char* what) {
  throw std::logic_error(std::string(file) + ":" + std::to_string(line) +
                         ": invariant failed: " + condition + " (" + what + ")");
}

}  // namespace fleetsim::internal

#define FLEETSIM_CHECK(condition, what)                                          \
  do {                                                                           \
    if (!(condition)) [[unlikely]]                                               \
      ::fleetsim::internal::CheckFailed(__FILE__, __LINE__, #condition, (what)); \
  } while (false)
