#include "unicode_tables.h"

#include <gtest/gtest.h>

#include <vector>

namespace tiankong {
namespace unicode {
namespace {

bool Has(char32_t c, CharFlag flag) { return (Flags(c) & flag) != 0; }

std::vector<char32_t> LowercaseOf(char32_t c) {
  char32_t out[kMaxLowercase];
  return std::vector<char32_t>(out, out + Lowercase(c, out));
}

std::vector<char32_t> DecompositionOf(char32_t c) {
  char32_t out[kMaxDecomposition];
  return std::vector<char32_t>(out, out + Decompose(c, out));
}

TEST(UnicodeTablesTest, ControlFollowsHfIsControl) {
  EXPECT_TRUE(Has(0x00, kControl));
  EXPECT_TRUE(Has(0x7F, kControl));
  EXPECT_TRUE(Has(0x00AD, kControl));  // soft hyphen, Cf
  EXPECT_TRUE(Has(0x200B, kControl));  // zero width space, Cf
  EXPECT_TRUE(Has(0xE000, kControl));  // private use, Co
  EXPECT_FALSE(Has(U'\t', kControl));  // BERT counts these as whitespace
  EXPECT_FALSE(Has(U'\n', kControl));
  EXPECT_FALSE(Has(U'\r', kControl));
  EXPECT_FALSE(Has(0x0378, kControl));  // unassigned is not control for HF
  EXPECT_FALSE(Has(0x08E2, kControl));  // Cf only since Unicode 9.0
  EXPECT_FALSE(Has(U'a', kControl));
}

TEST(UnicodeTablesTest, WhitespaceIsWhiteSpaceProperty) {
  for (char32_t c : {U' ', U'\t', U'\n', U'\r', U'\v', U'\f', U'\u0085', U'\u00A0', U'\u1680', U'\u2000', U'\u2028',
                     U'\u2029', U'\u3000'}) {
    EXPECT_TRUE(Has(c, kWhitespace)) << std::hex << static_cast<uint32_t>(c);
  }
  EXPECT_FALSE(Has(0x200B, kWhitespace));  // ZWSP is Cf, not White_Space
  EXPECT_FALSE(Has(0x180E, kWhitespace));
  EXPECT_FALSE(Has(U'a', kWhitespace));
}

TEST(UnicodeTablesTest, PunctuationIsUnicodePOrAsciiPunctuation) {
  for (char32_t c : {U'!', U'$', U'+', U'<', U'^', U'`', U'~', U'\u3002', U'\uFF0C', U'\u300A', U'\u2014', U'\u00BF',
                     U'\u166D'}) {  // U+166D: Po in Unicode 8.0
    EXPECT_TRUE(Has(c, kPunctuation)) << std::hex << static_cast<uint32_t>(c);
  }
  EXPECT_FALSE(Has(U'\u00A5', kPunctuation));  // ¥ is Sc, not ASCII
  EXPECT_FALSE(Has(U'\u2E43', kPunctuation));  // Po only since Unicode 9.0
  EXPECT_FALSE(Has(U'a', kPunctuation));
  EXPECT_FALSE(Has(U'\u4E2D', kPunctuation));
}

TEST(UnicodeTablesTest, ChineseMatchesBertRanges) {
  EXPECT_TRUE(Has(0x4E00, kChinese));
  EXPECT_TRUE(Has(0x9FFF, kChinese));
  EXPECT_TRUE(Has(0x3400, kChinese));
  EXPECT_TRUE(Has(0x20000, kChinese));
  EXPECT_TRUE(Has(0x2B81F, kChinese));
  EXPECT_FALSE(Has(0x2B820, kChinese));  // HF leaves a gap here
  EXPECT_TRUE(Has(0x2B920, kChinese));
  EXPECT_TRUE(Has(0xF900, kChinese));
  EXPECT_FALSE(Has(0x3002, kChinese));   // 。 punctuation
  EXPECT_FALSE(Has(0x3042, kChinese));   // あ
  EXPECT_FALSE(Has(0xAC00, kChinese));   // 가
  EXPECT_FALSE(Has(0x30000, kChinese));  // ext G: not in BERT's list
}

TEST(UnicodeTablesTest, NonspacingMarks) {
  EXPECT_TRUE(Has(0x0301, kNonspacingMark));
  EXPECT_TRUE(Has(0x1734, kNonspacingMark));   // Mn in 8.0 (Mc today)
  EXPECT_FALSE(Has(0x1885, kNonspacingMark));  // Mn only since 9.0
  EXPECT_FALSE(Has(U'e', kNonspacingMark));
}

TEST(UnicodeTablesTest, Lowercase) {
  EXPECT_EQ(LowercaseOf(U'A'), std::vector<char32_t>{U'a'});
  EXPECT_EQ(LowercaseOf(U'a'), std::vector<char32_t>{U'a'});
  EXPECT_EQ(LowercaseOf(U'\u00C0'), std::vector<char32_t>{U'\u00E0'});
  EXPECT_EQ(LowercaseOf(U'\u03A3'), std::vector<char32_t>{U'\u03C3'});  // no final-sigma context
  EXPECT_EQ(LowercaseOf(U'\u0130'), (std::vector<char32_t>{U'i', U'\u0307'}));
  EXPECT_EQ(LowercaseOf(U'\uFF21'), std::vector<char32_t>{U'\uFF41'});
  EXPECT_EQ(LowercaseOf(U'\U00010400'), std::vector<char32_t>{U'\U00010428'});
  EXPECT_EQ(LowercaseOf(U'\u01C5'), std::vector<char32_t>{U'\u01C6'});  // titlecase ǅ
  EXPECT_EQ(LowercaseOf(U'\u4E2D'), std::vector<char32_t>{U'\u4E2D'});
}

TEST(UnicodeTablesTest, CanonicalDecomposition) {
  EXPECT_EQ(DecompositionOf(U'\u00E9'), (std::vector<char32_t>{U'e', U'\u0301'}));
  // Recursive: U+1E17 -> U+0113 U+0301 -> e U+0304 U+0301
  EXPECT_EQ(DecompositionOf(U'\u1E17'), (std::vector<char32_t>{U'e', U'\u0304', U'\u0301'}));
  EXPECT_EQ(DecompositionOf(U'\uAC01'), (std::vector<char32_t>{0x1100, 0x1161, 0x11A8}));  // 각
  EXPECT_EQ(DecompositionOf(U'\uAC00'), (std::vector<char32_t>{0x1100, 0x1161}));          // 가
  EXPECT_EQ(DecompositionOf(U'\uF900'), std::vector<char32_t>{U'\u8C48'});                 // compatibility ideograph
  EXPECT_EQ(DecompositionOf(U'\uFB01'), std::vector<char32_t>{U'\uFB01'});                 // ﬁ: compatibility only
  EXPECT_EQ(DecompositionOf(U'\U00011938'), std::vector<char32_t>{U'\U00011938'});         // after 12.1
  EXPECT_EQ(DecompositionOf(U'a'), std::vector<char32_t>{U'a'});
}

TEST(UnicodeTablesTest, CombiningClass) {
  EXPECT_EQ(CombiningClass(U'a'), 0);
  EXPECT_EQ(CombiningClass(0x0301), 230);
  EXPECT_EQ(CombiningClass(0x0316), 220);
  EXPECT_EQ(CombiningClass(0x0345), 240);
  EXPECT_EQ(CombiningClass(0x1D165), 216);
}

TEST(UnicodeTablesTest, OutOfRangeHasNoFlags) {
  EXPECT_EQ(Flags(0x110000), 0);
  EXPECT_EQ(Flags(0xFFFFFFFF), 0);
}

}  // namespace
}  // namespace unicode
}  // namespace tiankong
