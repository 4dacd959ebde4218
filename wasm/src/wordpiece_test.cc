#include "wordpiece.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tiankong {
namespace text {
namespace {

class WordPieceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(
        vocab_.Parse("[UNK]\nun\n##aff\n##able\nunaff\na\n##a\n\xE4\xB8\xAD\n##\xE6\x96\x87\n"
                     "\xF0\x9F\x98\x80\n",
                     &error))
        << error;
  }

  // "token[begin,end)" for each piece of `word`.
  std::vector<std::string> Pieces(std::string_view word, size_t max_chars = 100) {
    WordPiece wordpiece(vocab_, kUnk, max_chars);
    std::vector<AlignedChar> chars;
    size_t error_offset;
    EXPECT_TRUE(DecodeUtf8(word, &chars, &error_offset));
    std::vector<Piece> pieces;
    wordpiece.Tokenize(chars.data(), chars.size(), &pieces);
    std::vector<std::string> out;
    for (const Piece& p : pieces) {
      out.push_back(vocab_.Token(p.id) + "[" + std::to_string(p.begin) + "," + std::to_string(p.end) + ")");
    }
    return out;
  }

  static constexpr int32_t kUnk = 0;
  Vocab vocab_;
};

using Strings = std::vector<std::string>;

TEST_F(WordPieceTest, GreedyLongestMatchFirst) {
  // "unaff" is longer than "un", so it wins even though un + ##aff + ##able also works.
  EXPECT_EQ(Pieces("unaffable"), (Strings{"unaff[0,5)", "##able[5,9)"}));
  EXPECT_EQ(Pieces("unable"), (Strings{"un[0,2)", "##able[2,6)"}));
  EXPECT_EQ(Pieces("aaa"), (Strings{"a[0,1)", "##a[1,2)", "##a[2,3)"}));
}

TEST_F(WordPieceTest, MultiByteCharsCountAsOneChar) {
  EXPECT_EQ(Pieces("\xE4\xB8\xAD"), Strings{"\xE4\xB8\xAD[0,1)"});  // 中
  EXPECT_EQ(Pieces("\xE4\xB8\xAD\xE6\x96\x87"), (Strings{"\xE4\xB8\xAD[0,1)", "##\xE6\x96\x87[1,2)"}));
  EXPECT_EQ(Pieces("\xF0\x9F\x98\x80"), Strings{"\xF0\x9F\x98\x80[0,1)"});
}

TEST_F(WordPieceTest, AnyUnmatchedPositionMakesTheWholeWordUnknown) {
  EXPECT_EQ(Pieces("unx"), Strings{"[UNK][0,3)"});
  EXPECT_EQ(Pieces("xun"), Strings{"[UNK][0,3)"});
  EXPECT_EQ(Pieces("able"), Strings{"[UNK][0,4)"});  // only "##able" exists: not word-initial
}

TEST_F(WordPieceTest, AWordSpelledLikeAContinuationMatchesIt) {
  EXPECT_EQ(Pieces("##aff"), Strings{"##aff[0,5)"});  // HF looks the whole word up as-is
}

TEST_F(WordPieceTest, MaxInputCharsCountsCharsNotBytes) {
  EXPECT_EQ(Pieces(std::string(5, 'a'), 5).size(), 5u);
  EXPECT_EQ(Pieces(std::string(6, 'a'), 5), Strings{"[UNK][0,6)"});
  std::string three_chinese;
  for (int i = 0; i < 3; ++i) three_chinese += "\xE4\xB8\xAD";  // 9 bytes, 3 chars
  EXPECT_EQ(Pieces(three_chinese, 3), Strings{"[UNK][0,3)"});   // 中 then no ##中
}

TEST_F(WordPieceTest, EmptyWordAddsNothing) { EXPECT_EQ(Pieces(""), Strings{}); }

TEST(WordPieceLargeVocabTest, ManyTokensSurviveRehashing) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "w" + std::to_string(i) + "\n##" + std::to_string(i) + "\n";
  text += "[UNK]\n";
  Vocab vocab;
  std::string error;
  ASSERT_TRUE(vocab.Parse(text, &error)) << error;
  WordPiece wordpiece(vocab, vocab.Find("[UNK]"), 100);
  std::vector<AlignedChar> chars;
  size_t error_offset;
  ASSERT_TRUE(DecodeUtf8("w4999", &chars, &error_offset));
  std::vector<Piece> pieces;
  wordpiece.Tokenize(chars.data(), chars.size(), &pieces);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(vocab.Token(pieces[0].id), "w4999");
}

}  // namespace
}  // namespace text
}  // namespace tiankong
