// ConfusionSets (tiankong.h "Spelling check"): sound, near-sound and shape confusions over a vocabulary.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tiankong/tiankong.h"

namespace tiankong {
namespace {

class ConfusionSetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    tokenizer_ = Tokenizer::FromVocab(
        "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n们\n门\n闷\n在\n再\n载\n以\n已\n己\n四\n是\n十\n年\n连\n很\n狠\n未\n末\n"
        "行\n航\n元\n##们\n门口\nmen",
        TokenizerOptions{}, &error);
    ASSERT_NE(tokenizer_, nullptr) << error;
    sets_ = std::make_unique<ConfusionSets>(*tokenizer_);
  }

  int32_t Id(const char* token) const { return tokenizer_->TokenToId(token); }

  // The kind `to` has among the confusions of `from`, 0 when it is not one.
  int KindOf(const char* from, const char* to) const {
    for (const Confusion& c : sets_->Of(Id(from))) {
      if (c.id == Id(to)) return static_cast<int>(c.kind);
    }
    return 0;
  }

  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<ConfusionSets> sets_;
};

TEST_F(ConfusionSetsTest, SameSyllableAnyToneIsSound) {
  EXPECT_EQ(KindOf("们", "门"), 1);  // men5 / men2
  EXPECT_EQ(KindOf("们", "闷"), 1);  // men4
  EXPECT_EQ(KindOf("在", "再"), 1);
  EXPECT_EQ(KindOf("再", "载"), 1);
  EXPECT_EQ(KindOf("已", "以"), 1);
  EXPECT_EQ(KindOf("很", "狠"), 1);
  EXPECT_EQ(KindOf("门", "们"), 1);  // symmetric
}

TEST_F(ConfusionSetsTest, OneFuzzySwapIsNearSound) {
  EXPECT_EQ(KindOf("四", "是"), 2);  // s / sh
  EXPECT_EQ(KindOf("是", "四"), 2);
  EXPECT_EQ(KindOf("四", "十"), 2);
  EXPECT_EQ(KindOf("年", "连"), 2);  // n / l
  EXPECT_EQ(KindOf("行", "很"), 0);  // xing vs hen: nothing alike
}

TEST_F(ConfusionSetsTest, LookAlikesAreShapeUnlessTheySoundAlike) {
  EXPECT_EQ(KindOf("未", "末"), 3);
  EXPECT_EQ(KindOf("已", "己"), 3);  // yǐ / jǐ
  EXPECT_EQ(KindOf("己", "已"), 3);
}

TEST_F(ConfusionSetsTest, SecondReadingCounts) {
  EXPECT_EQ(KindOf("行", "航"), 1);  // 行 háng (its second reading) / 航 háng
}

TEST_F(ConfusionSetsTest, OnlyOneCharacterTokensAndNeverItselfOrSpecials) {
  EXPECT_TRUE(sets_->Of(Id("##们")).empty());
  EXPECT_TRUE(sets_->Of(Id("门口")).empty());
  EXPECT_TRUE(sets_->Of(Id("men")).empty());
  EXPECT_TRUE(sets_->Of(tokenizer_->MaskId()).empty());
  EXPECT_TRUE(sets_->Of(-1).empty());
  EXPECT_TRUE(sets_->Of(tokenizer_->VocabSize()).empty());
  for (int32_t id = 0; id < tokenizer_->VocabSize(); ++id) {
    const std::vector<Confusion> of = sets_->Of(id);
    for (const Confusion& c : of) {
      EXPECT_NE(c.id, id);
      EXPECT_GE(c.id, 5) << "special token among the confusions of " << tokenizer_->IdToToken(id);
      EXPECT_NE(tokenizer_->IdToToken(c.id), "##们");
    }
    EXPECT_TRUE(std::is_sorted(of.begin(), of.end(), [](const Confusion& a, const Confusion& b) {
      return a.kind < b.kind || (a.kind == b.kind && a.id < b.id);
    }));
  }
}

}  // namespace
}  // namespace tiankong
