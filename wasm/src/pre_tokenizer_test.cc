#include "pre_tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tiankong {
namespace text {
namespace {

std::vector<std::string> Words(std::string_view utf8) {
  std::vector<AlignedChar> chars;
  size_t error_offset;
  EXPECT_TRUE(DecodeUtf8(utf8, &chars, &error_offset));
  std::vector<WordRange> words;
  PreTokenize(chars, 0, chars.size(), &words);
  std::vector<std::string> out;
  for (const WordRange& w : words) {
    std::string s;
    for (size_t i = w.begin; i < w.end; ++i) AppendUtf8(chars[i].cp, &s);
    out.push_back(s);
  }
  return out;
}

using Strings = std::vector<std::string>;

TEST(PreTokenizerTest, SplitsOnWhitespaceAndDropsIt) {
  EXPECT_EQ(Words("  hello   world \t"), (Strings{"hello", "world"}));
  EXPECT_EQ(Words("a\xE3\x80\x80"
                  "b"),
            (Strings{"a", "b"}));  // U+3000
  EXPECT_EQ(Words(""), Strings{});
  EXPECT_EQ(Words("   "), Strings{});
}

TEST(PreTokenizerTest, IsolatesEachPunctuationChar) {
  EXPECT_EQ(Words("Hello, world!!"), (Strings{"Hello", ",", "world", "!", "!"}));
  EXPECT_EQ(Words("a$b+c^d`e"), (Strings{"a", "$", "b", "+", "c", "^", "d", "`", "e"}));
  EXPECT_EQ(Words("\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xE3\x80\x82"),
            (Strings{"\xE4\xBD\xA0\xE5\xA5\xBD", "\xEF\xBC\x8C", "\xE4\xB8\x96\xE7\x95\x8C",
                     "\xE3\x80\x82"}));  // 你好，世界。(CJK spacing is the normalizer's job)
}

TEST(PreTokenizerTest, SymbolsThatAreNotPunctuationStayInWords) {
  EXPECT_EQ(Words("x\xC2\xA5y"), Strings{"x\xC2\xA5y"});  // ¥ (Sc)
  EXPECT_EQ(Words("\xF0\x9F\x98\x80"
                  "a"),
            Strings{"\xF0\x9F\x98\x80"
                    "a"});  // 😀a
}

TEST(PreTokenizerTest, RespectsTheRange) {
  std::vector<AlignedChar> chars;
  size_t error_offset;
  ASSERT_TRUE(DecodeUtf8("ab cd", &chars, &error_offset));
  std::vector<WordRange> words;
  PreTokenize(chars, 1, 4, &words);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[0].begin, 1u);
  EXPECT_EQ(words[0].end, 2u);
  EXPECT_EQ(words[1].begin, 3u);
  EXPECT_EQ(words[1].end, 4u);
}

}  // namespace
}  // namespace text
}  // namespace tiankong
