// The window and epoch arithmetic, with every expected value worked out by hand.
#include "fleet/window_clock.h"

#include <stdexcept>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(WindowClock, AnEpochIsTheStalenessInWholeStepsAtLeastOne) {
  // 0.5 ms steps (the default gateway -> instance latency), 50 ms staleness: 100 steps.
  const WindowClock clock(500'000, 0.05);
  EXPECT_EQ(clock.step(), 500'000);
  EXPECT_EQ(clock.epoch(), 50'000'000);
  // 0.7 ms staleness rounds up to 2 steps; 0.1 ms to the floor of one step.
  EXPECT_EQ(WindowClock(500'000, 0.0007).epoch(), 1'000'000);
  EXPECT_EQ(WindowClock(500'000, 0.0001).epoch(), 500'000);
  // A staleness of exactly one step is one step.
  EXPECT_EQ(WindowClock(500'000, 0.0005).epoch(), 500'000);
}

TEST(WindowClock, TheLongestWindowIsWholeStepsOfAtMostOneSecond) {
  EXPECT_EQ(WindowClock(500'000, 0.05).max_window(), 1'000'000'000);
  // 700 ns does not divide 1 s: 1,428,571 whole steps = 999,999,700 ns.
  EXPECT_EQ(WindowClock(700, 0.05).max_window(), 999'999'700);
  // A step longer than the cap: one step.
  EXPECT_EQ(WindowClock(3'000'000'000, 5.0).max_window(), 3'000'000'000);
  EXPECT_EQ(WindowClock(500'000, 0.05, 1'200'000).max_window(), 1'000'000);
}

TEST(WindowClock, AWindowRunsFromTheStepOfTheNextEventToItsEpochsEnd) {
  const WindowClock clock(500'000, 0.05);
  // The next event at 1.234567 ms: its step starts at 1 ms, its epoch ends at 50 ms.
  Window w = clock.WindowAt(1'234'567, 0);
  EXPECT_EQ(w.start, 1'000'000);
  EXPECT_EQ(w.end, 50'000'000);
  // An event on an epoch boundary opens the next epoch's window.
  w = clock.WindowAt(50'000'000, 50'000'000);
  EXPECT_EQ(w.start, 50'000'000);
  EXPECT_EQ(w.end, 100'000'000);
  // Empty stretches are skipped: the next event 7.3 s later starts a window there.
  w = clock.WindowAt(7'300'100'000, 100'000'000);
  EXPECT_EQ(w.start, 7'300'000'000);
  EXPECT_EQ(w.end, 7'350'000'000);
  EXPECT_EQ(clock.EpochOf(w.start), 146);
}

TEST(WindowClock, AWindowNeverStartsBeforeThePreviousOnesEnd) {
  const WindowClock clock(500'000, 0.05);
  // An event inside the step the previous window ended in: the window starts at that end.
  const Window w = clock.WindowAt(50'100'000, 50'250'000);
  EXPECT_EQ(w.start, 50'250'000);
  EXPECT_EQ(w.end, 100'000'000);
}

TEST(WindowClock, ALongEpochIsCutIntoWindowsOfAtMostOneSecond) {
  // 3.3 s staleness: epochs [0, 3.3 s), [3.3 s, 6.6 s), ...
  const WindowClock clock(500'000, 3.3);
  EXPECT_EQ(clock.epoch(), 3'300'000'000);
  Window w = clock.WindowAt(0, 0);
  EXPECT_EQ(w.start, 0);
  EXPECT_EQ(w.end, 1'000'000'000);
  w = clock.WindowAt(2'600'000'000, 2'000'000'000);
  EXPECT_EQ(w.start, 2'600'000'000);
  EXPECT_EQ(w.end, 3'300'000'000);  // the epoch ends first
  EXPECT_EQ(clock.EpochOf(w.start), 0);
  EXPECT_EQ(clock.EpochOf(w.end), 1);
}

TEST(WindowClock, StepBoundaries) {
  const WindowClock clock(500'000, 0.05);
  EXPECT_EQ(clock.StepAtOrAfter(0), 0);
  EXPECT_EQ(clock.StepAtOrAfter(1'000'000), 1'000'000);
  EXPECT_EQ(clock.StepAtOrAfter(1'000'001), 1'500'000);
  EXPECT_EQ(clock.EndOfStep(0), 500'000);
  EXPECT_EQ(clock.EndOfStep(999'999), 1'000'000);
  EXPECT_EQ(clock.EndOfStep(1'000'000), 1'500'000);
}

TEST(WindowClock, RefusesANonPositiveStepOrStaleness) {
  EXPECT_THROW(WindowClock(0, 0.05), std::invalid_argument);
  EXPECT_THROW(WindowClock(500'000, 0.0), std::invalid_argument);
}

}  // namespace
}  // namespace fleetsim
