#include "fleet/thread_team.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

// Every index runs exactly once per loop, whatever the owners and however many loops run
// back to back (a helper may still be leaving one loop when the next opens).
TEST(ThreadTeam, RunsEveryIndexOnceInEveryLoop) {
  for (const int threads : {1, 2, 3}) {
    ThreadTeam team(threads);
    EXPECT_EQ(team.size(), threads);
    for (std::size_t n : {0u, 1u, 2u, 7u, 64u, 1000u}) {
      for (int loop = 0; loop < 50; ++loop) {
        std::vector<std::atomic<int>> runs(n);
        // Owners skewed on purpose: most indices belong to one thread, so the others help.
        team.For(
            n, [](std::size_t i) { return i % 5 == 0 ? i : 0; },
            [&](std::size_t i, std::size_t) { runs[i].fetch_add(1); });
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(runs[i].load(), 1) << threads << " threads, n " << n << ", index " << i;
      }
    }
  }
}

// Work runs on more than the calling thread when the team has helpers (and the helpers
// are awake: each index waits a little, so the first loops give them time to start).
TEST(ThreadTeam, HelpersTakeIndices) {
  ThreadTeam team(2);
  std::set<std::thread::id> seen;
  std::mutex mutex;
  for (int loop = 0; loop < 200 && seen.size() < 2; ++loop) {
    team.For(
        64, [](std::size_t i) { return i; },
        [&](std::size_t, std::size_t) {
          std::this_thread::sleep_for(std::chrono::microseconds(20));
          const std::lock_guard lock(mutex);
          seen.insert(std::this_thread::get_id());
        });
  }
  EXPECT_EQ(seen.size(), 2u);
}

// An exception from a body reaches the caller once every index has run, and the team
// works on afterwards.
TEST(ThreadTeam, ABodysExceptionReachesTheCaller) {
  ThreadTeam team(2);
  std::atomic<int> runs{0};
  EXPECT_THROW(team.For(
                   100, [](std::size_t i) { return i; },
                   [&](std::size_t i, std::size_t) {
                     runs.fetch_add(1);
                     if (i == 37) throw std::runtime_error("index 37");
                   }),
               std::runtime_error);
  EXPECT_EQ(runs.load(), 100);
  runs = 0;
  team.For(
      10, [](std::size_t i) { return i; }, [&](std::size_t, std::size_t) { runs.fetch_add(1); });
  EXPECT_EQ(runs.load(), 10);
}

// A team that never ran a loop, or whose helpers sleep, stops at once.
TEST(ThreadTeam, StopsWhetherItRanOrNot) {
  { ThreadTeam idle(4); }
  ThreadTeam team(2);
  std::atomic<int> runs{0};
  team.For(
      8, [](std::size_t i) { return i; }, [&](std::size_t, std::size_t) { runs.fetch_add(1); });
  std::this_thread::sleep_for(ThreadTeam::kSpinBeforeSleep * 2);  // the helper sleeps now
  team.For(
      8, [](std::size_t i) { return i; }, [&](std::size_t, std::size_t) { runs.fetch_add(1); });
  EXPECT_EQ(runs.load(), 16);
}

}  // namespace
}  // namespace fleetsim
