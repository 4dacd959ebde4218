#include "tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tiankong {
namespace {

// Ids are line numbers: [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4 我=5 爱=6 北=7 京=8 ，=9
// hello=10 ##s=11 i=12 ##phone=13 1=14 ##5=15 e=16 ##1=17
constexpr char kVocab[] =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n\xE6\x88\x91\n\xE7\x88\xB1\n\xE5\x8C\x97\n\xE4\xBA\xAC\n"
    "\xEF\xBC\x8C\nhello\n##s\ni\n##phone\n1\n##5\ne\n##1\n";

std::unique_ptr<Tokenizer> Make(TokenizerOptions options = {}) {
  std::string error;
  auto tokenizer = Tokenizer::FromVocab(kVocab, options, &error);
  EXPECT_NE(tokenizer, nullptr) << error;
  return tokenizer;
}

Encoding Encode(const Tokenizer& tokenizer, std::string_view text) {
  Encoding e;
  EXPECT_EQ(tokenizer.Encode(text, &e), Status::kOk);
  return e;
}

std::vector<std::pair<uint32_t, uint32_t>> Offsets(const Encoding& e) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const Span& s : e.offsets) out.emplace_back(s.start, s.end);
  return out;
}

using Ids = std::vector<int32_t>;
using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;

TEST(TokenizerTest, ChineseSentenceWithMask) {
  const auto t = Make();
  // 我爱[MASK]京，hello
  const Encoding e = Encode(*t, "\xE6\x88\x91\xE7\x88\xB1[MASK]\xE4\xBA\xAC\xEF\xBC\x8Chellos");
  EXPECT_EQ(e.ids, (Ids{2, 5, 6, 4, 8, 9, 10, 11, 3}));
  EXPECT_EQ(e.tokens, (std::vector<std::string>{"[CLS]", "\xE6\x88\x91", "\xE7\x88\xB1", "[MASK]", "\xE4\xBA\xAC",
                                                "\xEF\xBC\x8C", "hello", "##s", "[SEP]"}));
  EXPECT_EQ(Offsets(e), (Pairs{{0, 0}, {0, 1}, {1, 2}, {2, 8}, {8, 9}, {9, 10}, {10, 15}, {15, 16}, {0, 0}}));
  EXPECT_EQ(e.mask_positions, (std::vector<int32_t>{3}));
  EXPECT_EQ(e.truncated_tokens, 0);
}

TEST(TokenizerTest, MaskConstraintsAreKeptPerMask) {
  const auto t = Make();
  // 我[MASK:ài]京[MASK]【MASK：】: the constraint of each mask, with its span in the input.
  const Encoding e =
      Encode(*t, "\xE6\x88\x91[MASK:\xC3\xA0i]\xE4\xBA\xAC[MASK]\xE3\x80\x90MASK\xEF\xBC\x9A\xE3\x80\x91");
  EXPECT_EQ(e.ids, (Ids{2, 5, 4, 8, 4, 4, 3}));
  EXPECT_EQ(e.mask_positions, (std::vector<int32_t>{2, 4, 5}));
  ASSERT_EQ(e.mask_constraints.size(), 3u);
  EXPECT_TRUE(e.mask_constraints[0].present);
  EXPECT_EQ(e.mask_constraints[0].text, "\xC3\xA0i");
  EXPECT_EQ(e.mask_constraints[0].span.start, 7u);
  EXPECT_EQ(e.mask_constraints[0].span.end, 9u);
  EXPECT_FALSE(e.mask_constraints[1].present);
  EXPECT_TRUE(e.mask_constraints[2].present);
  EXPECT_EQ(e.mask_constraints[2].text, "");
  EXPECT_EQ(e.mask_constraints[2].span.start, e.mask_constraints[2].span.end);
  EXPECT_EQ(Offsets(e)[2], (std::pair<uint32_t, uint32_t>{1, 10}));  // the mask covers its constraint
}

TEST(TokenizerTest, OffsetsAreUtf16UnitsOfTheOriginal) {
  const auto t = Make();
  // 😀 (2 UTF-16 units, unknown) then 北: 北 starts at 2.
  const Encoding e = Encode(*t, "\xF0\x9F\x98\x80\xE5\x8C\x97");
  EXPECT_EQ(e.ids, (Ids{2, 1, 7, 3}));
  EXPECT_EQ(Offsets(e), (Pairs{{0, 0}, {0, 2}, {2, 3}, {0, 0}}));
}

TEST(TokenizerTest, SpecialTokensAreExtractedBeforeNormalization) {
  const auto t = Make();
  // The mask splits "hello[MASK]s" although there is no space; a control char is cleaned.
  const Encoding e = Encode(*t,
                            "hello[mask]\x01"
                            "e");
  EXPECT_EQ(e.ids, (Ids{2, 10, 4, 16, 3}));
  EXPECT_EQ(Offsets(e), (Pairs{{0, 0}, {0, 5}, {5, 11}, {12, 13}, {0, 0}}));
  EXPECT_EQ(e.mask_positions, (std::vector<int32_t>{2}));
}

TEST(TokenizerTest, MixedWordBecomesPiecesOrOneUnknown) {
  const auto t = Make();
  // Digits are not punctuation: "iphone15" is one word.
  EXPECT_EQ(Encode(*t, "iphone15").ids, (Ids{2, 12, 13, 17, 15, 3}));
  EXPECT_EQ(Encode(*t, "iphone16").ids, (Ids{2, 1, 3}));  // no ##6: the whole word is [UNK]
  EXPECT_EQ(Offsets(Encode(*t, "iphone16")), (Pairs{{0, 0}, {0, 8}, {0, 0}}));
}

TEST(TokenizerTest, LowercaseOption) {
  TokenizerOptions options;
  options.lowercase = true;
  options.strip_accents = true;
  const auto t = Make(options);
  EXPECT_EQ(Encode(*t, "HELLO H\xC3\x89LLO").ids, (Ids{2, 10, 10, 3}));  // HÉLLO -> hello
}

TEST(TokenizerTest, EmptyAndBlankTextIsJustClsSep) {
  const auto t = Make();
  EXPECT_EQ(Encode(*t, "").ids, (Ids{2, 3}));
  EXPECT_EQ(Encode(*t, " \t\xE3\x80\x80").ids, (Ids{2, 3}));
}

TEST(TokenizerTest, TruncationIsExplicit) {
  TokenizerOptions options;
  options.max_length = 4;  // [CLS] + 2 tokens + [SEP]
  const auto t = Make(options);
  const Encoding e = Encode(*t, "\xE6\x88\x91\xE7\x88\xB1\xE5\x8C\x97\xE4\xBA\xAC[MASK]");  // 我爱北京[MASK]
  EXPECT_EQ(e.ids, (Ids{2, 5, 6, 3}));
  EXPECT_EQ(e.tokens.size(), 4u);
  EXPECT_EQ(e.offsets.size(), 4u);
  EXPECT_EQ(e.truncated_tokens, 3);
  EXPECT_TRUE(e.mask_positions.empty());  // the mask was cut off
  EXPECT_TRUE(e.mask_constraints.empty());
}

TEST(TokenizerTest, InvalidUtf8IsReportedAndLeavesNothing) {
  const auto t = Make();
  Encoding e;
  e.ids = {42};
  EXPECT_EQ(t->Encode("ok\xC0\xAF", &e), Status::kInvalidUtf8);
  EXPECT_TRUE(e.ids.empty());
  EXPECT_TRUE(e.tokens.empty());
  EXPECT_TRUE(e.offsets.empty());
}

TEST(TokenizerTest, VocabAccessors) {
  const auto t = Make();
  EXPECT_EQ(t->VocabSize(), 18);
  EXPECT_EQ(t->TokenToId("hello"), 10);
  EXPECT_EQ(t->TokenToId("nope"), -1);
  EXPECT_EQ(t->IdToToken(11), "##s");
  EXPECT_EQ(t->IdToToken(18), "");
  EXPECT_EQ(t->IdToToken(-1), "");
  EXPECT_EQ(t->PadId(), 0);
  EXPECT_EQ(t->UnkId(), 1);
  EXPECT_EQ(t->ClsId(), 2);
  EXPECT_EQ(t->SepId(), 3);
  EXPECT_EQ(t->MaskId(), 4);
}

TEST(TokenizerTest, FromVocabExplainsFailures) {
  std::string error;
  EXPECT_EQ(Tokenizer::FromVocab("[PAD]\n[UNK]\n[CLS]\n[SEP]\n", {}, &error), nullptr);
  EXPECT_NE(error.find("no [MASK] token"), std::string::npos) << error;
  TokenizerOptions options;
  options.max_length = 1;
  EXPECT_EQ(Tokenizer::FromVocab(kVocab, options, &error), nullptr);
  EXPECT_NE(error.find("max_length must be at least 2"), std::string::npos) << error;
  EXPECT_EQ(Tokenizer::FromVocab("a\na\n", {}, &error), nullptr);
  EXPECT_EQ(error, "vocab line 2 repeats the token \"a\" of line 1");
}

// The real bert-base-chinese vocab, when the shared data is present.
TEST(TokenizerTest, BertBaseChineseVocab) {
  // This file is <repo>/wasm/src/tokenizer_test.cc; the shared data is <repo>/../shared/data.
  const std::string source = __FILE__;
  const std::string repo = source.substr(0, source.rfind("/wasm/src/"));
  const std::string path = repo + "/../shared/data/vocab/bert-base-chinese/vocab.txt";
  std::ifstream file(path, std::ios::binary);
  if (!file) GTEST_SKIP() << "shared data not found at " << path;
  std::stringstream bytes;
  bytes << file.rdbuf();
  std::string error;
  const auto t = Tokenizer::FromVocab(bytes.str(), {}, &error);
  ASSERT_NE(t, nullptr) << error;
  EXPECT_EQ(t->VocabSize(), 21128);
  EXPECT_EQ(t->MaskId(), 103);
  // Ids from tokenizer.json: U+2028 and "##" U+2028 (vocab lines 344 and 13503, 1-based).
  EXPECT_EQ(t->TokenToId("\xE2\x80\xA8"), 343);
  EXPECT_EQ(t->TokenToId("##\xE2\x80\xA8"), 13502);
}

}  // namespace
}  // namespace tiankong
