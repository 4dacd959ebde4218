#include "vocab.h"

#include <gtest/gtest.h>

#include <string>

namespace tiankong {
namespace text {
namespace {

TEST(VocabTest, LineNumberIsTheId) {
  Vocab vocab;
  std::string error;
  ASSERT_TRUE(vocab.Parse("[PAD]\n[UNK]\n\xE4\xB8\xAD\n##s\n", &error)) << error;
  EXPECT_EQ(vocab.size(), 4);
  EXPECT_EQ(vocab.Find("[PAD]"), 0);
  EXPECT_EQ(vocab.Find("\xE4\xB8\xAD"), 2);
  EXPECT_EQ(vocab.Find("##s"), 3);
  EXPECT_EQ(vocab.Find("s"), -1);
  EXPECT_EQ(vocab.Token(1), "[UNK]");
}

TEST(VocabTest, SplitsOnNewlineOnlySoU2028TokensSurvive) {
  Vocab vocab;
  std::string error;
  // U+2028 LINE SEPARATOR and "##" U+2028 are real bert-base-chinese tokens.
  ASSERT_TRUE(vocab.Parse("a\n\xE2\x80\xA8\n##\xE2\x80\xA8\nb", &error)) << error;
  EXPECT_EQ(vocab.size(), 4);
  EXPECT_EQ(vocab.Find("\xE2\x80\xA8"), 1);
  EXPECT_EQ(vocab.Find("##\xE2\x80\xA8"), 2);
  EXPECT_EQ(vocab.Find("b"), 3);  // no trailing newline needed
}

TEST(VocabTest, ReportsProblemsWithTheirLine) {
  Vocab vocab;
  std::string error;
  EXPECT_FALSE(vocab.Parse("", &error));
  EXPECT_EQ(error, "vocab is empty");
  EXPECT_FALSE(vocab.Parse("a\n\nb\n", &error));
  EXPECT_EQ(error, "vocab line 2 is empty");
  EXPECT_FALSE(vocab.Parse("a\nb\na\n", &error));
  EXPECT_EQ(error, "vocab line 3 repeats the token \"a\" of line 1");
  EXPECT_FALSE(vocab.Parse("a\nb\xFF\n", &error));
  EXPECT_EQ(error, "vocab line 2 is not valid UTF-8 (byte 2)");
  EXPECT_FALSE(vocab.Parse("a\r\nb\r\n", &error));
  EXPECT_EQ(error, "vocab line 1 ends with a carriage return: convert CRLF line endings to LF");
  EXPECT_EQ(vocab.size(), 0);
}

}  // namespace
}  // namespace text
}  // namespace tiankong
