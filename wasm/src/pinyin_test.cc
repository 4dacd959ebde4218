#include "pinyin.h"

#include <gtest/gtest.h>

#include "pinyin_table.h"

namespace tiankong::pinyin {
namespace {

Reading P(const char* text) {
  Reading r;
  EXPECT_TRUE(Parse(text, &r)) << text;
  return r;
}

TEST(PinyinTest, ReadingsLikeliestFirst) {
  auto shang = ReadingsOf(U'上');
  ASSERT_FALSE(shang.empty());
  EXPECT_EQ(Format(shang[0], false), "shang4");
  EXPECT_EQ(Format(shang[0]), "shàng");
  auto xing = ReadingsOf(U'行');
  ASSERT_GE(xing.size(), 2u);
  EXPECT_EQ(Format(xing[0]), "xíng");  // kHanyuPinlu: xíng(2943) before háng(218)
  EXPECT_EQ(Format(xing[1]), "háng");
  EXPECT_EQ(Format(ReadingsOf(U'女')[0]), "nǚ");
  EXPECT_EQ(Format(ReadingsOf(U'绿')[0], false), "lü4");
  EXPECT_TRUE(ReadingsOf(U'a').empty());
  EXPECT_TRUE(ReadingsOf(0x10FFFF).empty());
}

TEST(PinyinTest, StandardReadingsAreModernOnes) {
  auto bu = ReadingsOf(U'不');  // bù, bu, bú standard; fǒu, fōu, fū only in 汉语大字典 (kHanyuPinyin)
  ASSERT_GE(bu.size(), 4u);
  EXPECT_TRUE(bu[0].standard);
  int classical = 0;
  for (const Reading& r : bu) classical += r.standard ? 0 : 1;
  EXPECT_EQ(classical, 3);
  EXPECT_EQ(Format(bu.back(), false), "fu1");
  EXPECT_FALSE(bu.back().standard);
  for (const Reading& r : ReadingsOf(U'看')) EXPECT_TRUE(r.standard);  // kàn, kān
}

TEST(PinyinTest, ParsesToneNumbersMarksAndUSpellings) {
  EXPECT_EQ(P("shang4"), P("shàng"));
  EXPECT_EQ(P("SHANG4"), P("shàng"));
  EXPECT_EQ(P(" shang "), (Reading{P("shang4").syllable, 0}));
  EXPECT_EQ(P("lv4"), P("lǜ"));
  EXPECT_EQ(P("lü4"), P("lǜ"));
  EXPECT_EQ(P("lu:4"), P("lǜ"));
  EXPECT_EQ(P("lu\xCC\x88\xCC\x80"), P("lǜ"));  // decomposed ü + grave
  EXPECT_EQ(P("ma5").tone, 5);
  EXPECT_EQ(P("ê̄"), P("ê1"));
  EXPECT_EQ(P("m\xCC\x84"), P("m1"));
  EXPECT_EQ(P("ǹg"), P("ng4"));
  Reading r{7, 3};
  EXPECT_FALSE(Parse("shangg", &r));
  EXPECT_FALSE(Parse("shàng4", &r));
  EXPECT_FALSE(Parse("sha4ng", &r));
  EXPECT_FALSE(Parse("shang6", &r));
  EXPECT_FALSE(Parse("", &r));
  EXPECT_FALSE(Parse("上", &r));
  EXPECT_EQ(r, (Reading{7, 3}));  // untouched on failure
}

TEST(PinyinTest, FormatRoundTripsEverySyllableAndTone) {
  for (int s = 0; s < pinyin_table::kSyllableCount; ++s) {
    for (int tone = 1; tone <= 5; ++tone) {
      Reading reading{s, tone};
      Reading marked, numbered;
      ASSERT_TRUE(Parse(Format(reading, true), &marked)) << Format(reading, false);
      ASSERT_TRUE(Parse(Format(reading, false), &numbered)) << Format(reading, false);
      EXPECT_EQ(numbered, reading);
      // The neutral tone has no mark: it reads back as "any tone"; so does "r" (儿化), which has
      // no letter to carry a mark (Unihan gives it the neutral tone only).
      if (SyllableName(s) == "r") continue;
      EXPECT_EQ(marked, (Reading{s, tone == 5 ? 0 : tone})) << Format(reading, true);
    }
  }
}

TEST(PinyinTest, MarkPlacement) {
  EXPECT_EQ(Format(P("liu4")), "liù");
  EXPECT_EQ(Format(P("gui4")), "guì");
  EXPECT_EQ(Format(P("zhou1")), "zhōu");
  EXPECT_EQ(Format(P("xue2")), "xué");
  EXPECT_EQ(Format(P("er4")), "èr");
  EXPECT_EQ(Format(P("hm5")), "hm");
}

TEST(PinyinTest, ToneClassesAndMatching) {
  EXPECT_EQ(ClassOf(1), ToneClass::kPing);
  EXPECT_EQ(ClassOf(2), ToneClass::kPing);
  EXPECT_EQ(ClassOf(3), ToneClass::kZe);
  EXPECT_EQ(ClassOf(4), ToneClass::kZe);
  EXPECT_EQ(ClassOf(5), ToneClass::kNone);
  EXPECT_TRUE(Matches(U'岸', P("an4")));
  EXPECT_TRUE(Matches(U'岸', P("an")));
  EXPECT_FALSE(Matches(U'岸', P("an2")));
  EXPECT_TRUE(Matches(U'行', P("hang2")));  // a polyphone matches any of its readings
}

}  // namespace
}  // namespace tiankong::pinyin
