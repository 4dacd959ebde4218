// ParseSoundConstraint / SoundAccepts / SoundEligibility / ReadingsOfText (tiankong.h "Pinyin").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tiankong/tiankong.h"

namespace tiankong {
namespace {

SoundConstraint Parsed(const std::string& text) {
  SoundConstraint constraint;
  std::string error;
  EXPECT_TRUE(ParseSoundConstraint(text, &constraint, &error)) << text << ": " << error;
  return constraint;
}

std::string ErrorOf(const std::string& text) {
  SoundConstraint constraint;
  std::string error;
  EXPECT_FALSE(ParseSoundConstraint(text, &constraint, &error)) << text;
  return error;
}

TEST(SoundConstraintTest, SyllablesTonesAndClasses) {
  EXPECT_EQ(FormatSoundConstraint(Parsed("shang")), "shang");
  EXPECT_EQ(FormatSoundConstraint(Parsed("shang4")), "shàng");
  EXPECT_EQ(FormatSoundConstraint(Parsed("shàng")), "shàng");
  EXPECT_EQ(FormatSoundConstraint(Parsed(" SHANG4 ")), "shàng");
  EXPECT_EQ(FormatSoundConstraint(Parsed("ｓｈａｎｇ４")), "shàng");  // full-width, as an IME may type it
  EXPECT_EQ(FormatSoundConstraint(Parsed("lv4")), "lǜ");
  EXPECT_EQ(FormatSoundConstraint(Parsed("平")), "平");
  EXPECT_EQ(Parsed("仄").tone_class, 2);
  EXPECT_EQ(Parsed("shang").tone, 0);
}

TEST(SoundConstraintTest, MistakesSayWhat) {
  EXPECT_NE(ErrorOf("").find("empty"), std::string::npos);
  EXPECT_NE(ErrorOf("   ").find("empty"), std::string::npos);
  EXPECT_NE(ErrorOf("shangg").find("\"shangg\" is not a pinyin syllable"), std::string::npos);
  EXPECT_NE(ErrorOf("shang6").find("tone 6"), std::string::npos);
  EXPECT_NE(ErrorOf("shang0").find("tone 0"), std::string::npos);
  EXPECT_NE(ErrorOf("上").find("not a pinyin syllable"), std::string::npos);
  EXPECT_NE(ErrorOf("shàng4").find("not a pinyin syllable"), std::string::npos);  // two tones
}

TEST(SoundConstraintTest, PolyphonesMatchByAnyReading) {
  EXPECT_TRUE(SoundAccepts(Parsed("shang4"), U'上'));
  EXPECT_TRUE(SoundAccepts(Parsed("shang"), U'上'));
  EXPECT_FALSE(SoundAccepts(Parsed("shang1"), U'上'));
  EXPECT_TRUE(SoundAccepts(Parsed("hang2"), U'行'));  // xíng and háng
  EXPECT_TRUE(SoundAccepts(Parsed("xing2"), U'行'));
  // 长: cháng (平) and zhǎng (仄) — both classes.
  EXPECT_TRUE(SoundAccepts(Parsed("平"), U'长'));
  EXPECT_TRUE(SoundAccepts(Parsed("仄"), U'长'));
  EXPECT_TRUE(SoundAccepts(Parsed("平"), U'天'));
  EXPECT_FALSE(SoundAccepts(Parsed("仄"), U'天'));
  EXPECT_TRUE(SoundAccepts(Parsed("仄"), U'上'));
  EXPECT_FALSE(SoundAccepts(Parsed("平"), U'a'));
  EXPECT_FALSE(SoundAccepts(Parsed("shang"), U'，'));
}

TEST(SoundConstraintTest, EligibilityIsSingleCharactersThatMatch) {
  std::string error;
  auto tokenizer = Tokenizer::FromVocab("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n上\n尚\n下\n##上\n上下\nshang\n赏\n伤",
                                        TokenizerOptions{}, &error);
  ASSERT_NE(tokenizer, nullptr) << error;
  EXPECT_EQ(SoundEligibility(*tokenizer, Parsed("shang")),
            (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(SoundEligibility(*tokenizer, Parsed("shang4")),
            (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(SoundEligibility(*tokenizer, Parsed("仄")),  // 上 shàng, 下 xià, 赏 shǎng
            (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0}));
}

TEST(SoundConstraintTest, ReadingsOfTextSkipWhatHasNone) {
  const std::vector<CharReadings> readings = ReadingsOfText("银行a，😀长");
  ASSERT_EQ(readings.size(), 3u);
  EXPECT_EQ(readings[0].readings, (std::vector<std::string>{"yín"}));
  EXPECT_EQ(readings[1].readings[0], "xíng");
  EXPECT_EQ(readings[1].tones[0], 2);
  EXPECT_EQ(readings[2].span.start, 6u);  // 😀 is two UTF-16 units
  EXPECT_EQ(readings[2].span.end, 7u);
  EXPECT_EQ(ReadingsOfText("上", false)[0].readings[0], "shang4");
  const CharReadings kan = ReadingsOfText("看")[0];  // kàn 仄, kān 平; every reading standard
  EXPECT_EQ(kan.classes, (std::vector<uint8_t>{2, 1}));
  EXPECT_EQ(kan.standard, (std::vector<uint8_t>{1, 1}));
  EXPECT_TRUE(ReadingsOfText("\xC0").empty());
  // A constraint puts the readings that meet it first, the rest in their order.
  const SoundConstraint hang = Parsed("hang2");
  EXPECT_EQ(ReadingsOfText("行", true, &hang)[0].readings[0], "háng");
  EXPECT_EQ(ReadingsOfText("行", true, &hang)[0].readings[1], "xíng");
  const SoundConstraint ze = Parsed("仄");
  EXPECT_EQ(ReadingsOfText("长", true, &ze)[0].readings[0], "zhǎng");
}

}  // namespace
}  // namespace tiankong
