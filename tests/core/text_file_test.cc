// ReadTextFile: a whole file, byte for byte; "" for a file that cannot be read.
#include "core/text_file.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::TempFile;

TEST(TextFile, ReadsEveryByteUnchanged) {
  // Line ends are not translated, a missing final newline is kept missing, and a NUL byte
  // does not end the text.
  const std::string contents = std::string("a: 1\r\nb: 2\n\n\tc\0d", 16) + "\xff end";
  ASSERT_EQ(contents.size(), 21u);
  TempFile file("x.yaml", contents);
  EXPECT_EQ(ReadTextFile(file.path()), contents);
}

TEST(TextFile, AnEmptyFileIsEmpty) {
  TempFile file("empty.txt", "");
  EXPECT_EQ(ReadTextFile(file.path()), "");
}

TEST(TextFile, AMissingFileOrADirectoryReadsAsEmpty) {
  TempFile file("x.txt", "text");
  EXPECT_EQ(ReadTextFile(file.dir() / "absent.txt"), "");
  EXPECT_EQ(ReadTextFile(file.dir()), "");
}

TEST(TextFile, ALargeFileIsReadWhole) {
  std::string contents;
  for (int i = 0; i < 100000; ++i)
    contents += std::to_string(i) + "\n";
  TempFile file("big.txt", contents);
  EXPECT_EQ(ReadTextFile(file.path()), contents);
}

}  // namespace
}  // namespace fleetsim
