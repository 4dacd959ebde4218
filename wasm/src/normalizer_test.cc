#include "normalizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tiankong {
namespace text {
namespace {

std::vector<AlignedChar> Normalized(std::string_view utf8, const NormalizerOptions& options) {
  std::vector<AlignedChar> chars, out;
  size_t error_offset;
  EXPECT_TRUE(DecodeUtf8(utf8, &chars, &error_offset));
  Normalize(chars.data(), chars.data() + chars.size(), options, &out);
  return out;
}

std::string Text(const std::vector<AlignedChar>& chars) {
  std::string s;
  for (const AlignedChar& c : chars) AppendUtf8(c.cp, &s);
  return s;
}

NormalizerOptions BertBaseChinese() { return {}; }

NormalizerOptions Uncased() {
  NormalizerOptions o;
  o.strip_accents = true;
  o.lowercase = true;
  return o;
}

TEST(NormalizerTest, CleanTextDropsControlsAndMapsWhitespaceToSpace) {
  EXPECT_EQ(Text(Normalized(std::string("a\0b\x01"
                                        "c\xEF\xBF\xBD"
                                        "d\xC2\xAD"
                                        "e",
                                        12),
                            BertBaseChinese())),
            "abcde");  // U+0000, U+0001, U+FFFD, soft hyphen
  EXPECT_EQ(Text(Normalized("a\tb\nc\rd\xE3\x80\x80"
                            "e\xE2\x80\xA8"
                            "f",
                            BertBaseChinese())),
            "a b c d e f");  // \t \n \r U+3000 U+2028
}

TEST(NormalizerTest, CleanTextOffKeepsEverything) {
  NormalizerOptions o;
  o.clean_text = false;
  EXPECT_EQ(Text(Normalized("a\x01\tb", o)), "a\x01\tb");
}

TEST(NormalizerTest, ChineseCharsGetSpacesSharingTheirSpan) {
  const auto out = Normalized(
      "a\xE4\xB8\xAD"
      "b",
      BertBaseChinese());  // a中b
  ASSERT_EQ(Text(out), "a \xE4\xB8\xAD b");
  for (size_t i = 1; i <= 3; ++i) {  // ' ', 中, ' ' all point at 中
    EXPECT_EQ(out[i].source.start, 1u);
    EXPECT_EQ(out[i].source.end, 2u);
  }
  EXPECT_EQ(out[4].source.start, 2u);
}

TEST(NormalizerTest, HiraganaAndHangulAreNotChineseChars) {
  EXPECT_EQ(Text(Normalized("\xE3\x81\x82\xEA\xB0\x80", BertBaseChinese())), "\xE3\x81\x82\xEA\xB0\x80");
}

TEST(NormalizerTest, BertBaseChineseKeepsCaseAndAccents) {
  EXPECT_EQ(Text(Normalized("H\xC3\xA9llo", BertBaseChinese())), "H\xC3\xA9llo");  // Héllo
}

TEST(NormalizerTest, UncasedStripsAccentsAndLowercases) {
  EXPECT_EQ(Text(Normalized("H\xC3\xA9llo \xC3\x80\xC3\x9C", Uncased())), "hello au");             // Héllo ÀÜ
  EXPECT_EQ(Text(Normalized("\xEA\xB0\x81", Uncased())), "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8");  // 각 -> jamo
}

TEST(NormalizerTest, ExpansionsShareTheSourceSpan) {
  NormalizerOptions o;
  o.lowercase = true;                            // without strip_accents: U+0130 -> i U+0307 stays two chars
  const auto out = Normalized("x\xC4\xB0y", o);  // xİy
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[1].cp, U'i');
  EXPECT_EQ(out[2].cp, U'\u0307');
  EXPECT_EQ(out[1].source.start, 1u);
  EXPECT_EQ(out[2].source.start, 1u);
  EXPECT_EQ(out[2].source.end, 2u);
  EXPECT_EQ(out[3].source.start, 2u);
}

TEST(NormalizerTest, StripAccentsReordersMarksCanonicallyByPosition) {
  NormalizerOptions o;
  o.strip_accents = true;
  // U+1D16D (ccc 226) before U+1D165 (ccc 216): NFD swaps them; both are Mc, so they stay.
  const auto out = Normalized(
      "a\xF0\x9D\x85\xAD\xF0\x9D\x85\xA5"
      "b",
      o);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[1].cp, 0x1D165u);
  EXPECT_EQ(out[2].cp, 0x1D16Du);
  EXPECT_EQ(out[1].source.start, 1u);  // spans stay with positions
  EXPECT_EQ(out[2].source.start, 3u);
}

TEST(NormalizerTest, SpansOfKeptCharsSurviveRemovals) {
  const auto out = Normalized(
      "\x01\x01"
      "ab",
      BertBaseChinese());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].source.start, 2u);
  EXPECT_EQ(out[1].source.start, 3u);
}

}  // namespace
}  // namespace text
}  // namespace tiankong
