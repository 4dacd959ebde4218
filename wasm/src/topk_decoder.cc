#include "topk_decoder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "simd_kernels.h"

namespace tiankong {
namespace decoder {

namespace {
// Strict weak order "a ranks before b": larger logit, then smaller id.
inline bool RanksBefore(const ScoredId& a, const ScoredId& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}
}  // namespace

bool IsUnusedSlot(std::string_view token) {
  constexpr std::string_view kPrefix = "[unused";
  if (token.size() < kPrefix.size() + 2 || token.substr(0, kPrefix.size()) != kPrefix ||
      token.back() != ']') {
    return false;
  }
  const std::string_view digits = token.substr(kPrefix.size(), token.size() - kPrefix.size() - 1);
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsContinuationPiece(std::string_view token) {
  return token.size() > 2 && token[0] == '#' && token[1] == '#';
}

std::vector<uint8_t> BuildEligibility(const Tokenizer& tokenizer, const DecodeOptions& options) {
  const int32_t vocab_size = tokenizer.VocabSize();
  const auto in_range = [vocab_size](int32_t id) { return id >= 0 && id < vocab_size; };
  std::vector<uint8_t> eligible(static_cast<size_t>(vocab_size), options.allow_ids.empty() ? 1 : 0);
  for (int32_t id : options.allow_ids) {
    if (in_range(id)) eligible[id] = 1;
  }
  for (int32_t id : options.deny_ids) {
    if (in_range(id)) eligible[id] = 0;
  }
  if (options.exclude_special) {
    for (int32_t id : {tokenizer.PadId(), tokenizer.UnkId(), tokenizer.ClsId(), tokenizer.SepId(),
                       tokenizer.MaskId()}) {
      if (in_range(id)) eligible[id] = 0;
    }
  }
  if (options.exclude_special || options.exclude_subwords) {
    for (int32_t id = 0; id < vocab_size; ++id) {
      const std::string& token = tokenizer.IdToToken(id);
      if ((options.exclude_special && IsUnusedSlot(token)) ||
          (options.exclude_subwords && IsContinuationPiece(token))) {
        eligible[id] = 0;
      }
    }
  }
  return eligible;
}

void SelectTopK(const float* row, const uint8_t* eligible, size_t n, size_t k,
                std::vector<ScoredId>* out) {
  out->clear();
  if (k == 0) return;
  // `floor` is the logit an entry must beat to enter: -inf while the heap has room
  // (which also keeps -inf entries out), then the logit of the heap's worst entry.
  // An entry equal to the floor never enters: ids only grow, so it would rank after.
  float floor = -std::numeric_limits<float>::infinity();
  for (size_t i = simd::FindFirstGreater(row, 0, n, floor); i < n;
       i = simd::FindFirstGreater(row, i + 1, n, floor)) {
    const float logit = row[i];
    if (!eligible[i]) continue;
    const ScoredId entry{logit, static_cast<int32_t>(i)};
    if (out->size() < k) {
      out->push_back(entry);
      std::push_heap(out->begin(), out->end(), RanksBefore);  // front = worst kept
      if (out->size() == k) floor = out->front().logit;
    } else {
      std::pop_heap(out->begin(), out->end(), RanksBefore);
      out->back() = entry;
      std::push_heap(out->begin(), out->end(), RanksBefore);
      floor = out->front().logit;
    }
  }
  std::sort_heap(out->begin(), out->end(), RanksBefore);
}

}  // namespace decoder

struct Decoder::Impl {
  std::vector<uint8_t> eligible;
  size_t top_k = 0;
  float threshold = 0.0f;
};

Decoder::Decoder(const Tokenizer& tokenizer, const DecodeOptions& options) : impl_(new Impl) {
  impl_->eligible = decoder::BuildEligibility(tokenizer, options);
  impl_->top_k = options.top_k > 0 ? static_cast<size_t>(options.top_k) : 0;
  impl_->threshold = options.threshold;
}

Decoder::~Decoder() = default;

DecodeStatus Decoder::Decode(const float* logits, size_t n_rows, size_t vocab_size,
                             std::vector<Decoded>* out) const {
  out->clear();
  if (vocab_size != impl_->eligible.size() || (logits == nullptr && n_rows > 0)) {
    return DecodeStatus::kBadShape;
  }
  out->resize(n_rows);
  std::vector<decoder::ScoredId> top;
  for (size_t r = 0; r < n_rows; ++r) {
    const float* row = logits + r * vocab_size;
    const simd::RowScan scan = simd::ScanRow(row, vocab_size);
    // NaN / +inf poison the softmax; an all -inf row has no distribution at all.
    if (scan.has_nan || !std::isfinite(scan.max)) {
      out->clear();
      return DecodeStatus::kNonFinite;
    }
    const double denominator = simd::SumExpShifted(row, vocab_size, scan.max);
    decoder::SelectTopK(row, impl_->eligible.data(), vocab_size, impl_->top_k, &top);

    Decoded& decoded = (*out)[r];
    double kept_mass = 0.0;
    for (const decoder::ScoredId& scored : top) {
      const float probability =
          static_cast<float>(std::exp(static_cast<double>(scored.logit) - scan.max) / denominator);
      if (probability < impl_->threshold) break;  // `top` is sorted: the rest are smaller
      decoded.candidates.push_back({scored.id, probability});
      kept_mass += probability;
    }
    // Distinct logits can round to the same probability: the contract orders those by id.
    std::sort(decoded.candidates.begin(), decoded.candidates.end(),
              [](const Candidate& a, const Candidate& b) {
                return a.probability > b.probability ||
                       (a.probability == b.probability && a.id < b.id);
              });
    decoded.other = static_cast<float>(std::max(0.0, 1.0 - kept_mass));
  }
  return DecodeStatus::kOk;
}

}  // namespace tiankong
