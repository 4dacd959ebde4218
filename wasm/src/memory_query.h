// What the memory reads from an input, and the n-gram evidence for one blank.
//
// Units: the memory sees an encoded input as token ids where special tokens ([CLS], [SEP],
// [PAD], [UNK]) are kBoundary (no n-gram or passage crosses them) and [MASK] is kWildcard. The
// builder splits corpus lines with the same rule, so counts and queries agree.
//
// Scoring a candidate c at blank p (stupid backoff, Brants et al. 2007): the windows through p
// are the terms log P(x_j | x_{j-n+1..j-1}) for j = p .. p+n-1 that have c in their history or
// predict c. Terms whose best match does not involve c are the same for every candidate; each
// term's gain is its log-probability minus that candidate-independent value (for j = p: minus the
// no-context estimate, log alpha^k + log P(c)). The gain is attributed to the length of the
// n-gram that matched, so the fusion can trust long matches more than bigrams.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ngram_table.h"
#include "tiankong/tiankong.h"

namespace tiankong {
namespace memory {

class QueryUnits {
 public:
  QueryUnits() = default;
  explicit QueryUnits(const Tokenizer& tokenizer);
  // The units of an encoded input: ids, with specials kBoundary and [MASK] (and every position in
  // mask_positions) kWildcard.
  std::vector<int32_t> Units(const int32_t* ids, size_t n, const int32_t* mask_positions, size_t n_masks) const;
  // True for ids the memory treats as a boundary (specials, [UNK], ids outside the vocabulary).
  bool IsBoundary(int32_t id) const;
  // What breaks n-grams in corpus lines: the boundaries and a literal [MASK] in the text.
  bool IsCorpusBoundary(int32_t id) const;

 private:
  int32_t specials_[4] = {-1, -1, -1, -1};  // pad, unk, cls, sep
  int32_t mask_ = -1;
  int32_t vocab_size_ = 0;
};

class BlankScorer {
 public:
  // `units` as QueryUnits::Units gives them; `p` the blank (units[p] is kWildcard).
  BlankScorer(const NgramTable& table, const float* unigram, const std::vector<int32_t>& units, size_t p);
  // Adds candidate `c`'s gains into gains[2..max_order] (gains[0..1] untouched).
  void Gains(int32_t c, float* gains) const;

 private:
  const NgramTable& table_;
  const float* unigram_;
  size_t order_ = 0;             // max n-gram length
  size_t left_ = 0;              // known units before the blank used as history
  size_t right_ = 0;             // known units after it that are predicted
  std::vector<int32_t> buffer_;  // units[p-left .. p+right], blank at index left_
  std::vector<float> floors_;    // per right term d (1..right_): its candidate-independent value
};

}  // namespace memory
}  // namespace tiankong
