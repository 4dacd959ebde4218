#include "text_readings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tiankong {
namespace memory {
namespace {

Section SectionOf(const std::vector<uint8_t>& bytes) {
  return Section{kSectionTextReadings, bytes.data(), bytes.size()};
}

IndexedText Text(size_t ids, std::vector<std::string> readings) {
  IndexedText text;
  text.ids.assign(ids, 7);
  text.readings = std::move(readings);
  return text;
}

TEST(DictionaryReadings, KeepsOnlyReadingsOtherThanTheFirst) {
  bool aligned = false;
  // The table reads 落 luò first (Unihan's kHanyuPinlu counts); the dictionary says là here.
  EXPECT_EQ(DictionaryReadings({"丢", "三", "落", "四"}, "diū sān là sì", &aligned),
            (std::vector<std::string>{"", "", "la4", ""}));
  EXPECT_TRUE(aligned);
  EXPECT_EQ(DictionaryReadings({"丢", "三", "落", "四"}, "diu1 san1  la4 si4 ", &aligned)[2], "la4")
      << "tone numbers and extra spaces";
  EXPECT_EQ(DictionaryReadings({"丢", "三", "落", "四"}, "diū sān luò sì", &aligned),
            (std::vector<std::string>{"", "", "", ""}))
      << "the first reading is not stored";
}

TEST(DictionaryReadings, SlipsAndMisalignmentsStoreNothing) {
  bool aligned = true;
  EXPECT_EQ(DictionaryReadings({"丢", "三", "落", "四"}, "diū sān kǒu sì", &aligned)[2], "")
      << "kǒu is no reading of 落";
  EXPECT_TRUE(aligned);
  EXPECT_EQ(DictionaryReadings({"丢", "三", "落", "四"}, "diū sān shangg sì", &aligned)[2], "");
  EXPECT_EQ(DictionaryReadings({"丢", "三", "落", "四"}, "diū sān la sì", &aligned)[2], "") << "no tone";
  EXPECT_EQ(DictionaryReadings({"丢", "三", "落"}, "diū sān là sì", &aligned), (std::vector<std::string>(3)));
  EXPECT_FALSE(aligned) << "three tokens, four syllables";
  EXPECT_EQ(DictionaryReadings({"丢三", "落", "四"}, "diū sān là", &aligned), (std::vector<std::string>(3)));
  EXPECT_FALSE(aligned) << "a token of two characters";
}

TEST(TextReadings, BuildsAndFindsEveryStoredUnit) {
  // Units: text 0 at 0..2, separator 3, text 1 at 4..7, separator 8, text 2 at 9..10.
  const std::vector<IndexedText> texts = {Text(3, {"", "la4", ""}), Text(4, {}), Text(2, {"la4", "hang2"})};
  EXPECT_EQ(TextBegins(texts), (std::vector<uint32_t>{0, 4, 9}));
  const std::vector<uint8_t> bytes = BuildTextReadings(texts);
  TextReadings readings;
  std::string error;
  ASSERT_TRUE(readings.Parse(SectionOf(bytes), 11, &error)) << error;
  EXPECT_EQ(readings.size(), 3u);
  for (uint32_t unit = 0; unit < 12; ++unit) {
    const char* at = readings.At(unit);
    const std::string want = unit == 1 || unit == 9 ? "la4" : unit == 10 ? "hang2" : "";
    EXPECT_EQ(at ? std::string(at) : std::string(), want) << unit;
    EXPECT_EQ(at != nullptr, !want.empty()) << unit;
  }
  EXPECT_EQ(readings.At(1), readings.At(9)) << "equal readings share one string";
}

TEST(TextReadings, RejectsMalformedSections) {
  const std::vector<uint8_t> good = BuildTextReadings({Text(3, {"", "la4", "hang2"})});
  TextReadings readings;
  std::string error;
  ASSERT_TRUE(readings.Parse(SectionOf(good), 3, &error)) << error;
  EXPECT_FALSE(readings.Parse(SectionOf(good), 2, &error)) << "unit 2 outside a 2-unit index";
  EXPECT_NE(error.find("outside"), std::string::npos) << error;
  EXPECT_TRUE(readings.empty()) << "a failed parse keeps nothing";

  const auto damaged = [&](size_t at, uint8_t value) {
    std::vector<uint8_t> bytes = good;
    bytes[at] = value;
    return bytes;
  };
  // Layout: count (0), string_bytes (4), entries from 8: unit, offset, unit, offset; strings at 24.
  EXPECT_FALSE(readings.Parse(SectionOf(damaged(0, 9)), 3, &error)) << "count past the end";
  EXPECT_FALSE(readings.Parse(SectionOf(damaged(16, 0)), 3, &error)) << "units do not ascend";
  EXPECT_NE(error.find("ascend"), std::string::npos) << error;
  EXPECT_FALSE(readings.Parse(SectionOf(damaged(12, 2)), 3, &error)) << "offset inside a string";
  EXPECT_FALSE(readings.Parse(SectionOf(damaged(good.size() - 1, 'x')), 3, &error)) << "no final NUL";
  const std::vector<uint8_t> cut(good.begin(), good.end() - 4);
  EXPECT_FALSE(readings.Parse(SectionOf(cut), 3, &error)) << "truncated";
}

}  // namespace
}  // namespace memory
}  // namespace tiankong
