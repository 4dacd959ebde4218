#include "utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tiankong {
namespace text {
namespace {

std::vector<AlignedChar> Decode(std::string_view bytes) {
  std::vector<AlignedChar> chars;
  size_t error_offset = 0;
  EXPECT_TRUE(DecodeUtf8(bytes, &chars, &error_offset)) << "error at byte " << error_offset;
  return chars;
}

// Byte offset of the first invalid sequence, or -1 when `bytes` decodes.
long FirstError(std::string_view bytes) {
  std::vector<AlignedChar> chars;
  size_t error_offset = 0;
  return DecodeUtf8(bytes, &chars, &error_offset) ? -1 : static_cast<long>(error_offset);
}

TEST(Utf8Test, DecodesEveryLengthWithUtf16Spans) {
  // a (1 byte), é (2), 中 (3), 😀 (4, a surrogate pair in UTF-16), b
  const auto chars = Decode(
      "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"
      "b");
  ASSERT_EQ(chars.size(), 5u);
  const char32_t want_cp[] = {U'a', U'\u00E9', U'\u4E2D', U'\U0001F600', U'b'};
  const uint32_t want_start[] = {0, 1, 2, 3, 5};
  const uint32_t want_end[] = {1, 2, 3, 5, 6};
  for (size_t i = 0; i < chars.size(); ++i) {
    EXPECT_EQ(chars[i].cp, want_cp[i]) << i;
    EXPECT_EQ(chars[i].source.start, want_start[i]) << i;
    EXPECT_EQ(chars[i].source.end, want_end[i]) << i;
  }
}

TEST(Utf8Test, AcceptsBoundaryScalarValues) {
  EXPECT_EQ(Decode(std::string("\0", 1))[0].cp, 0u);
  EXPECT_EQ(Decode("\x7F")[0].cp, 0x7Fu);
  EXPECT_EQ(Decode("\xC2\x80")[0].cp, 0x80u);
  EXPECT_EQ(Decode("\xDF\xBF")[0].cp, 0x7FFu);
  EXPECT_EQ(Decode("\xE0\xA0\x80")[0].cp, 0x800u);
  EXPECT_EQ(Decode("\xED\x9F\xBF")[0].cp, 0xD7FFu);  // last before the surrogates
  EXPECT_EQ(Decode("\xEE\x80\x80")[0].cp, 0xE000u);  // first after them
  EXPECT_EQ(Decode("\xEF\xBF\xBF")[0].cp, 0xFFFFu);
  EXPECT_EQ(Decode("\xF0\x90\x80\x80")[0].cp, 0x10000u);
  EXPECT_EQ(Decode("\xF4\x8F\xBF\xBF")[0].cp, 0x10FFFFu);
}

TEST(Utf8Test, RejectsInvalidSequencesAtTheirOffset) {
  EXPECT_EQ(FirstError("ab\x80"), 2);            // stray continuation byte
  EXPECT_EQ(FirstError("\xC0\xAF"), 0);          // overlong '/'
  EXPECT_EQ(FirstError("\xC1\xBF"), 0);          // overlong
  EXPECT_EQ(FirstError("\xE0\x9F\xBF"), 0);      // overlong 3-byte
  EXPECT_EQ(FirstError("\xF0\x8F\xBF\xBF"), 0);  // overlong 4-byte
  EXPECT_EQ(FirstError("a\xED\xA0\x80"), 1);     // U+D800 surrogate
  EXPECT_EQ(FirstError("\xED\xBF\xBF"), 0);      // U+DFFF surrogate
  EXPECT_EQ(FirstError("\xF4\x90\x80\x80"), 0);  // U+110000
  EXPECT_EQ(FirstError("\xF5\x80\x80\x80"), 0);  // lead byte beyond F4
  EXPECT_EQ(FirstError("\xFF"), 0);
  EXPECT_EQ(FirstError("\xE4\xB8"), 0);                  // truncated at end of input
  EXPECT_EQ(FirstError("x\xE4\xB8y"), 1);                // truncated before ASCII
  EXPECT_EQ(FirstError("\xF0\x9F\x98"), 0);              // truncated 4-byte
  EXPECT_EQ(FirstError("\xE4\xB8\xAD\xE4\xC0\xAD"), 3);  // bad third byte of the second char
}

TEST(Utf8Test, AppendUtf8RoundTrips) {
  for (char32_t cp : {U'\0', U'A', U'\u00E9', U'\u07FF', U'\u0800', U'\u4E2D', U'\uFFFD', U'\U00010000', U'\U0001F600',
                      U'\U0010FFFF'}) {
    std::string bytes;
    AppendUtf8(cp, &bytes);
    const auto chars = Decode(bytes);
    ASSERT_EQ(chars.size(), 1u);
    EXPECT_EQ(chars[0].cp, cp);
  }
}

}  // namespace
}  // namespace text
}  // namespace tiankong
