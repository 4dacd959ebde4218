#include "shape.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>

#include "shape_table.h"

namespace tiankong::shape {
namespace {

namespace table = tiankong::shape_table;

bool Lists(char32_t a, char32_t b) {
  auto similar = SimilarShapes(a);
  return std::any_of(similar.begin(), similar.end(), [b](const Similar& s) { return s.c == b; });
}

TEST(ShapeTest, KnownConfusablesAreNeighbours) {
  auto wei = SimilarShapes(U'未');
  ASSERT_FALSE(wei.empty());
  EXPECT_EQ(wei[0].c, U'末');
  EXPECT_GE(wei[0].score, 240);  // all but the length of the top strokes is shared
  EXPECT_EQ(SimilarShapes(U'末')[0].c, U'未');
  EXPECT_EQ(SimilarShapes(U'人')[0].c, U'入');
  EXPECT_EQ(SimilarShapes(U'入')[0].c, U'人');
  // Pairs that list each other (a few of the generator's SANITY_PAIRS).
  std::u32string_view pairs = U"己已已巳己巳拨拔辨辩辩辫戊戌戍戌问间王玉";
  for (size_t k = 0; k + 1 < pairs.size(); k += 2) {
    char32_t a = pairs[k], b = pairs[k + 1];
    EXPECT_TRUE(Lists(a, b)) << static_cast<uint32_t>(a) << " lists " << static_cast<uint32_t>(b);
    EXPECT_TRUE(Lists(b, a)) << static_cast<uint32_t>(b) << " lists " << static_cast<uint32_t>(a);
  }
}

TEST(ShapeTest, SimilarityIsSymmetricAndZeroForUnlike) {
  EXPECT_EQ(ShapeSimilarity(U'未', U'末'), SimilarShapes(U'未')[0].score);
  EXPECT_EQ(ShapeSimilarity(U'末', U'未'), ShapeSimilarity(U'未', U'末'));
  EXPECT_GT(ShapeSimilarity(U'己', U'巳'), 0);
  EXPECT_EQ(ShapeSimilarity(U'人', U'八'), 0);  // same strokes, not in the same places
  EXPECT_EQ(ShapeSimilarity(U'人', U'森'), 0);
  EXPECT_EQ(ShapeSimilarity(U'未', U'未'), 0);
  EXPECT_EQ(ShapeSimilarity(U'未', U'a'), 0);
  // Symmetric for every listed pair, whichever list it is found in.
  for (int i = 0; i < table::kCharCount; ++i) {
    char32_t c = table::kCodePoints[i];
    for (const Similar& s : SimilarShapes(c)) {
      ASSERT_EQ(ShapeSimilarity(s.c, c), s.score) << static_cast<uint32_t>(c);
    }
  }
}

TEST(ShapeTest, CharactersOutsideTheTableHaveNone) {
  EXPECT_TRUE(SimilarShapes(U'a').empty());
  EXPECT_TRUE(SimilarShapes(U'。').empty());
  EXPECT_TRUE(SimilarShapes(U'們').empty());  // traditional: not in the 通用规范汉字表
  EXPECT_TRUE(SimilarShapes(0).empty());
  EXPECT_TRUE(SimilarShapes(0x10FFFF).empty());
  EXPECT_TRUE(SimilarShapes(0x7FFFFFFF).empty());
}

TEST(ShapeTest, TableIsSortedAndListsAreBestFirst) {
  EXPECT_EQ(table::kCharCount, 8105);  // the 通用规范汉字表
  EXPECT_EQ(table::kOffsets[0], 0);
  EXPECT_EQ(table::kOffsets[table::kCharCount], table::kNeighbourCount);
  int empty = 0;
  for (int i = 0; i < table::kCharCount; ++i) {
    if (i > 0) ASSERT_LT(table::kCodePoints[i - 1], table::kCodePoints[i]);
    ASSERT_LE(table::kOffsets[i], table::kOffsets[i + 1]);
    char32_t c = table::kCodePoints[i];
    auto similar = SimilarShapes(c);
    ASSERT_LE(similar.size(), static_cast<size_t>(table::kMaxNeighbours));
    empty += similar.empty();
    for (size_t k = 0; k < similar.size(); ++k) {
      ASSERT_NE(similar[k].c, c);
      ASSERT_GE(similar[k].score, table::kMinScore);
      ASSERT_LE(similar[k].score, 255);
      if (k > 0) {
        ASSERT_GE(similar[k - 1].score, similar[k].score) << static_cast<uint32_t>(c);
        for (size_t m = 0; m < k; ++m) ASSERT_NE(similar[m].c, similar[k].c);
      }
    }
  }
  EXPECT_LT(empty, table::kCharCount / 20);  // nearly every character has a look-alike
}

}  // namespace
}  // namespace tiankong::shape
