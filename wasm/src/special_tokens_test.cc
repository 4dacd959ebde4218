#include "special_tokens.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tiankong {
namespace text {
namespace {

constexpr SpecialTokenIds kIds{0, 100, 101, 102, 103};

// Every special token FindSpecialTokens finds in `utf8`.
std::vector<SpecialMatch> Find(std::string_view utf8) {
  std::vector<AlignedChar> chars;
  size_t error_offset;
  EXPECT_TRUE(DecodeUtf8(utf8, &chars, &error_offset));
  std::vector<SpecialMatch> matches;
  FindSpecialTokens(chars, kIds, &matches);
  return matches;
}

// "id@begin-end" (char indices) for each match in `utf8`.
std::vector<std::string> Matches(std::string_view utf8) {
  std::vector<std::string> out;
  for (const SpecialMatch& m : Find(utf8)) {
    out.push_back(std::to_string(m.id) + "@" + std::to_string(m.begin) + "-" + std::to_string(m.end));
  }
  return out;
}

using Strings = std::vector<std::string>;

TEST(SpecialTokensTest, ExactTokensAnywhereInTheText) {
  EXPECT_EQ(Matches("[CLS]a[SEP]b[PAD][UNK][MASK]"),
            (Strings{"101@0-5", "102@6-11", "0@12-17", "100@17-22", "103@22-28"}));
  EXPECT_EQ(Matches("x[MASK]y"), Strings{"103@1-7"});
}

TEST(SpecialTokensTest, OnlyTheMaskIsForgiving) {
  EXPECT_EQ(Matches("[cls][Sep][pad]"), Strings{});  // HF matches these case-sensitively
  EXPECT_EQ(Matches("[mask][Mask][mASK]"), (Strings{"103@0-6", "103@6-12", "103@12-18"}));
}

TEST(SpecialTokensTest, FullWidthAndMixedBracketsAndLetters) {
  EXPECT_EQ(Matches("\xEF\xBC\xBBMASK\xEF\xBC\xBD"), Strings{"103@0-6"});  // ［MASK］
  EXPECT_EQ(Matches("[mask\xEF\xBC\xBD"), Strings{"103@0-6"});             // [mask］
  EXPECT_EQ(Matches("\xEF\xBC\xBB\xEF\xBD\x8D\xEF\xBD\x81\xEF\xBD\x93\xEF\xBD\x8B]"),
            Strings{"103@0-6"});  // ［ｍａｓｋ]
  EXPECT_EQ(Matches("\xEF\xBC\xBB"
                    "CLS]"),
            Strings{});  // only the mask is forgiving
}

TEST(SpecialTokensTest, LenticularBracketsAsAChineseKeyboardTypesThem) {
  EXPECT_EQ(Matches("\xE3\x80\x90MASK\xE3\x80\x91"), Strings{"103@0-6"});  // 【MASK】
  EXPECT_EQ(Matches("a\xE3\x80\x90mask\xE3\x80\x91"
                    "b"),
            Strings{"103@1-7"});                                // a【mask】b
  EXPECT_EQ(Matches("\xE3\x80\x90MASK]"), Strings{"103@0-6"});  // 【MASK]
  EXPECT_EQ(Matches("[MASK\xE3\x80\x91"), Strings{"103@0-6"});  // [MASK】
  EXPECT_EQ(Matches("\xE3\x80\x90"
                    "CLS\xE3\x80\x91"),
            Strings{});                               // 【CLS】: only the mask is forgiving
  EXPECT_EQ(Matches("\xE3\x80\x90MASK"), Strings{});  // unclosed
}

TEST(SpecialTokensTest, NearMissesAreText) {
  EXPECT_EQ(Matches("[MASK"), Strings{});
  EXPECT_EQ(Matches("MASK]"), Strings{});
  EXPECT_EQ(Matches("[MASKS]"), Strings{});
  EXPECT_EQ(Matches("[ MASK ]"), Strings{});
  EXPECT_EQ(Matches("[MAS]"), Strings{});
  EXPECT_EQ(Matches(""), Strings{});
}

// "begin-end" (char indices) of each match's constraint, "-" for a match without one.
std::vector<std::string> Constraints(std::string_view utf8) {
  std::vector<std::string> out;
  for (const SpecialMatch& m : Find(utf8)) {
    out.push_back(m.constrained ? std::to_string(m.constraint_begin) + "-" + std::to_string(m.constraint_end) : "-");
  }
  return out;
}

TEST(SpecialTokensTest, MaskWithAConstraint) {
  EXPECT_EQ(Matches("a[MASK:shang4]b"), Strings{"103@1-14"});
  EXPECT_EQ(Constraints("a[MASK:shang4]b"), Strings{"7-13"});
  EXPECT_EQ(Constraints("[MASK]"), Strings{"-"});
  EXPECT_EQ(Constraints("[mask:]"), Strings{"6-6"});  // empty: still a mask, judged later
  // 【MASK：平】 and ［MASK：shàng］: full-width colon and brackets, any constraint text.
  EXPECT_EQ(Matches("\xE3\x80\x90MASK\xEF\xBC\x9A\xE5\xB9\xB3\xE3\x80\x91"), Strings{"103@0-8"});
  EXPECT_EQ(Constraints("\xE3\x80\x90MASK\xEF\xBC\x9A\xE5\xB9\xB3\xE3\x80\x91"), Strings{"6-7"});
  EXPECT_EQ(Matches("\xEF\xBC\xBBMASK:sh\xC3\xA0ng\xEF\xBC\xBD"), Strings{"103@0-12"});
  // Not constraints: other tokens, brackets inside, unclosed, too long.
  EXPECT_EQ(Matches("[CLS:x]"), Strings{});
  EXPECT_EQ(Matches("[MASK:a[MASK]"), Strings{"103@7-13"});
  EXPECT_EQ(Matches("[MASK:shang"), Strings{});
  EXPECT_EQ(Matches("[MASK:" + std::string(kMaxConstraintChars, 'a') + "]"), Strings{"103@0-23"});
  EXPECT_EQ(Matches("[MASK:" + std::string(kMaxConstraintChars + 1, 'a') + "]"), Strings{});
  EXPECT_EQ(Matches("[MASK;x]"), Strings{});
}

TEST(SpecialTokensTest, LeftmostMatchesDoNotOverlap) {
  EXPECT_EQ(Matches("[[MASK]]"), Strings{"103@1-7"});
  EXPECT_EQ(Matches("[MASK][MASK]"), (Strings{"103@0-6", "103@6-12"}));
}

}  // namespace
}  // namespace text
}  // namespace tiankong
