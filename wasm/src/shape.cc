#include "shape.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "shape_table.h"

namespace tiankong::shape {
namespace {

namespace table = tiankong::shape_table;

// The index of `c` in the table, -1 when it is not there.
int IndexOf(char32_t c) {
  const uint32_t* end = table::kCodePoints + table::kCharCount;
  const uint32_t* it = std::lower_bound(table::kCodePoints, end, static_cast<uint32_t>(c));
  return it != end && *it == c ? static_cast<int>(it - table::kCodePoints) : -1;
}

// The score of kCodePoints[to] among the neighbours of kCodePoints[from], 0 when not listed.
int ListedScore(int from, int to) {
  for (size_t k = table::kOffsets[from]; k < table::kOffsets[from + 1]; ++k) {
    if (table::kNeighbours[k] == to) return table::kScores[k];
  }
  return 0;
}

}  // namespace

std::vector<Similar> SimilarShapes(char32_t c) {
  std::vector<Similar> out;
  int i = IndexOf(c);
  if (i < 0) return out;
  out.reserve(table::kOffsets[i + 1] - table::kOffsets[i]);
  for (size_t k = table::kOffsets[i]; k < table::kOffsets[i + 1]; ++k) {
    out.push_back({static_cast<char32_t>(table::kCodePoints[table::kNeighbours[k]]), table::kScores[k]});
  }
  return out;
}

int ShapeSimilarity(char32_t a, char32_t b) {
  int i = IndexOf(a), j = IndexOf(b);
  if (i < 0 || j < 0 || i == j) return 0;
  int score = ListedScore(i, j);
  return score != 0 ? score : ListedScore(j, i);
}

}  // namespace tiankong::shape
