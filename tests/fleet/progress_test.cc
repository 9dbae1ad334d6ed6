// The progress report's two styles, written into a memory file: a redrawn line for a
// terminal, plain periodic lines for a log.
#include "fleet/progress.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

// What the progress wrote, read back from a temporary file.
std::string Written(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file))
    text += static_cast<char>(c);
  return text;
}

TEST(Progress, WritesPlainLinesIntoALogAndALastOne) {
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  {
    Progress progress(Progress::Style::kPeriodicLines, log, std::chrono::hours(1), true);
    progress.Update(SecondsToSimTime(1.5), 10, 100, 5000);
    progress.Update(SecondsToSimTime(2.5), 20, 100, 9000);  // within the interval: no line
    progress.Done();
    progress.Done();  // said once
  }
  const std::string text = Written(log);
  std::fclose(log);
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_NE(text.find("fleetsim: progress: t = 1.5 s simulated | 10 of 100 requests finished"),
            std::string::npos)
      << text;
  // The second update shows only in the last line.
  EXPECT_NE(text.find("fleetsim: progress: last: t = 2.5 s simulated | 20 of 100 requests"),
            std::string::npos)
      << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
}

TEST(Progress, WritesALineEveryIntervalWhenTheIntervalIsShort) {
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  Progress progress(Progress::Style::kPeriodicLines, log, std::chrono::milliseconds(0), false);
  for (int i = 1; i <= 3; ++i)
    progress.Update(SecondsToSimTime(i), i, -1, i);
  // An interval of 0: every update is a line (and none at Done without first_and_last).
  progress.Done();
  const std::string text = Written(log);
  std::fclose(log);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
  EXPECT_NE(text.find("3 requests finished"), std::string::npos) << "unknown total: no 'of'";
}

TEST(Progress, RedrawsOneLineOnATerminalAndClearsIt) {
  std::FILE* tty = std::tmpfile();
  ASSERT_NE(tty, nullptr);
  Progress progress(Progress::Style::kRedrawnLine, tty, std::chrono::milliseconds(0), false);
  progress.Update(SecondsToSimTime(1), 1, 2, 3);
  progress.Done();
  const std::string text = Written(tty);
  std::fclose(tty);
  EXPECT_TRUE(text.starts_with("\r  t = 1.0 s simulated")) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
}

// auto into a log: a heartbeat per interval, nothing at the start or the end.
TEST(Progress, WritesOnlyHeartbeatsWithoutFirstAndLast) {
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  Progress progress(Progress::Style::kPeriodicLines, log, std::chrono::hours(1), false);
  progress.Update(SecondsToSimTime(1), 1, 2, 3);
  progress.Done();
  EXPECT_EQ(Written(log), "");
  std::fclose(log);
}

TEST(Progress, IsSilentWhenOff) {
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  Progress progress(Progress::Style::kOff, log, std::chrono::milliseconds(0), true);
  progress.Update(SecondsToSimTime(1), 1, 2, 3);
  progress.Done();
  EXPECT_EQ(Written(log), "");
  std::fclose(log);
}

}  // namespace
}  // namespace fleetsim
