#include "memory_query.h"

#include <algorithm>

#include "text_index.h"

namespace tiankong {
namespace memory {

QueryUnits::QueryUnits(const Tokenizer& tokenizer)
    : specials_{tokenizer.PadId(), tokenizer.UnkId(), tokenizer.ClsId(), tokenizer.SepId()},
      mask_(tokenizer.MaskId()),
      vocab_size_(tokenizer.VocabSize()) {}

bool QueryUnits::IsBoundary(int32_t id) const {
  return id < 0 || id >= vocab_size_ ||
         std::find(std::begin(specials_), std::end(specials_), id) != std::end(specials_);
}

bool QueryUnits::IsCorpusBoundary(int32_t id) const { return id == mask_ || IsBoundary(id); }

std::vector<int32_t> QueryUnits::Units(const int32_t* ids, size_t n, const int32_t* mask_positions,
                                       size_t n_masks) const {
  std::vector<int32_t> units(ids, ids + n);
  for (int32_t& unit : units) {
    if (unit == mask_)
      unit = kWildcard;
    else if (IsBoundary(unit))
      unit = kBoundary;
  }
  for (size_t m = 0; m < n_masks; ++m) {
    if (mask_positions[m] >= 0 && static_cast<size_t>(mask_positions[m]) < n) units[mask_positions[m]] = kWildcard;
  }
  return units;
}

BlankScorer::BlankScorer(const NgramTable& table, const float* unigram, const std::vector<int32_t>& units, size_t p)
    : table_(table), unigram_(unigram), order_(table.max_order()) {
  while (left_ + 1 < order_ && left_ < p && units[p - left_ - 1] >= 0) ++left_;
  while (right_ + 1 < order_ && p + right_ + 1 < units.size() && units[p + right_ + 1] >= 0) ++right_;
  buffer_.assign(units.begin() + static_cast<std::ptrdiff_t>(p - left_),
                 units.begin() + static_cast<std::ptrdiff_t>(p + right_ + 1));
  buffer_[left_] = 0;  // placeholder: floors never read the blank
  const float backoff = table_.backoff();
  floors_.assign(right_ + 1, 0.0f);
  for (size_t d = 1; d <= right_; ++d) {
    const size_t j = left_ + d, history = std::min(order_ - 1, left_ + d);
    float value = static_cast<float>(history) * backoff + unigram_[buffer_[j]];
    for (size_t k = d - 1; k >= 1; --k) {  // histories that stop short of the blank
      float log_p;
      if (table_.Find(&buffer_[j - k], k + 1, &log_p)) {
        value = log_p + static_cast<float>(history - k) * backoff;
        break;
      }
    }
    floors_[d] = value;
  }
}

void BlankScorer::Gains(int32_t c, float* gains) const {
  thread_local std::vector<int32_t> window;
  window = buffer_;
  window[left_] = c;
  const float backoff = table_.backoff();
  float log_p;
  // The term that predicts c from its left history.
  for (size_t k = left_; k >= 1; --k) {
    if (table_.Find(&window[left_ - k], k + 1, &log_p)) {
      gains[k + 1] += log_p - static_cast<float>(k) * backoff - unigram_[c];
      break;
    }
  }
  // Terms to the right whose history reaches back to c.
  for (size_t d = 1; d <= right_; ++d) {
    const size_t j = left_ + d, history = std::min(order_ - 1, left_ + d);
    for (size_t k = history; k >= d; --k) {
      if (table_.Find(&window[j - k], k + 1, &log_p)) {
        gains[k + 1] += log_p + static_cast<float>(history - k) * backoff - floors_[d];
        break;
      }
    }
  }
}

}  // namespace memory
}  // namespace tiankong
