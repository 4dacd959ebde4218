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
  if (token.size() < kPrefix.size() + 2 || token.substr(0, kPrefix.size()) != kPrefix || token.back() != ']') {
    return false;
  }
  const std::string_view digits = token.substr(kPrefix.size(), token.size() - kPrefix.size() - 1);
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsContinuationPiece(std::string_view token) { return token.size() > 2 && token[0] == '#' && token[1] == '#'; }

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
    for (int32_t id :
         {tokenizer.PadId(), tokenizer.UnkId(), tokenizer.ClsId(), tokenizer.SepId(), tokenizer.MaskId()}) {
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

void SelectTopK(const float* row, const uint8_t* eligible, size_t n, size_t k, std::vector<ScoredId>* out) {
  out->clear();
  if (k == 0) return;
  // `floor` is the logit an entry must beat to enter: -inf while the heap has room
  // (which also keeps -inf entries out), then the logit of the heap's worst entry.
  // An entry equal to the floor never enters: ids only grow, so it would rank after.
  float floor = -std::numeric_limits<float>::infinity();
  for (size_t i = simd::FindFirstGreater(row, 0, n, floor); i < n; i = simd::FindFirstGreater(row, i + 1, n, floor)) {
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
  const Memory* memory = nullptr;
  FusionWeights fusion;

  // Per-call scratch (a Decoder is immutable, so concurrent Decode calls are safe).
  struct Scratch {
    std::vector<decoder::ScoredId> top;
    std::vector<float> fused;
    std::vector<float> constrained;
    std::vector<int32_t> candidates;
    std::vector<CandidateEvidence> evidence;
  };

  // Softmax + top-k of one row (already checked finite); `hits` (may be null) tags candidates.
  void DecodeRow(const float* row, size_t vocab_size, const std::vector<CandidateEvidence>* hits, Scratch* scratch,
                 Decoded* decoded) const;
};

namespace {
// Logit gain the fusion gives one candidate (see FusionWeights).
float FusionGain(const CandidateEvidence& evidence, const FusionWeights& weights) {
  float gain = 0.0f;
  for (size_t n = 2; n < 9; ++n) gain += weights.ngram[n] * evidence.ngram_gain[n];
  if (evidence.hit.text >= 0) {
    gain += weights.hit_base + weights.hit_per_token * static_cast<float>(evidence.hit.strength) +
            (evidence.hit.whole ? weights.hit_whole : 0.0f);
  }
  return gain;
}

// `fused` := log((1 - floor) * softmax(fused) + floor * softmax(model)), a distribution again (its
// softmax is the mixture itself). Both rows have a finite maximum (the row was checked usable).
void MixInFloor(float floor, const float* model, std::vector<float>* fused) {
  const size_t n = fused->size();
  float max_fused = -INFINITY, max_base = -INFINITY;
  for (size_t id = 0; id < n; ++id) {
    max_fused = std::max(max_fused, (*fused)[id]);
    max_base = std::max(max_base, model[id]);
  }
  double sum_fused = 0.0, sum_base = 0.0;
  for (size_t id = 0; id < n; ++id) {
    sum_fused += std::exp((*fused)[id] - max_fused);
    sum_base += std::exp(model[id] - max_base);
  }
  const double w_fused = (1.0 - floor) / sum_fused, w_base = floor / sum_base;
  for (size_t id = 0; id < n; ++id) {
    const double p = w_fused * std::exp((*fused)[id] - max_fused) + w_base * std::exp(model[id] - max_base);
    (*fused)[id] = p > 0.0 ? static_cast<float>(std::log(p)) : -INFINITY;
  }
}
}  // namespace

Decoder::Decoder(const Tokenizer& tokenizer, const DecodeOptions& options) : impl_(new Impl) {
  impl_->eligible = decoder::BuildEligibility(tokenizer, options);
  impl_->top_k = options.top_k > 0 ? static_cast<size_t>(options.top_k) : 0;
  impl_->threshold = options.threshold;
  impl_->memory = options.memory;
  impl_->fusion = options.fusion;
}

Decoder::~Decoder() = default;

bool Decoder::Eligible(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < impl_->eligible.size() && impl_->eligible[id] != 0;
}

size_t Decoder::EligibleCount() const {
  return static_cast<size_t>(std::count(impl_->eligible.begin(), impl_->eligible.end(), uint8_t{1}));
}

void Decoder::Impl::DecodeRow(const float* row, size_t vocab_size, const std::vector<CandidateEvidence>* hits,
                              Scratch* scratch, Decoded* decoded) const {
  const simd::RowScan scan = simd::ScanRow(row, vocab_size);
  const double denominator = simd::SumExpShifted(row, vocab_size, scan.max);
  std::vector<decoder::ScoredId>& top = scratch->top;
  decoder::SelectTopK(row, eligible.data(), vocab_size, top_k, &top);
  double kept_mass = 0.0;
  for (const decoder::ScoredId& scored : top) {
    const float probability = static_cast<float>(std::exp(static_cast<double>(scored.logit) - scan.max) / denominator);
    if (probability < threshold) break;  // `top` is sorted: the rest are smaller
    Candidate candidate{scored.id, probability, {}};
    if (hits != nullptr) {
      for (const CandidateEvidence& evidence : *hits) {
        if (evidence.id == scored.id) {
          candidate.hit = evidence.hit;
          break;
        }
      }
    }
    decoded->candidates.push_back(candidate);
    kept_mass += probability;
  }
  // Distinct logits can round to the same probability: the contract orders those by id.
  std::sort(decoded->candidates.begin(), decoded->candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.probability > b.probability || (a.probability == b.probability && a.id < b.id);
  });
  decoded->other = static_cast<float>(std::max(0.0, 1.0 - kept_mass));
}

namespace {
// NaN / +inf poison the softmax; an all -inf row has no distribution at all.
bool RowIsUsable(const float* row, size_t vocab_size) {
  const simd::RowScan scan = simd::ScanRow(row, vocab_size);
  return !scan.has_nan && std::isfinite(scan.max);
}
}  // namespace

DecodeStatus Decoder::Decode(const float* logits, size_t n_rows, size_t vocab_size, std::vector<Decoded>* out) const {
  if (impl_->memory != nullptr) return DecodeStatus::kBadShape;  // the memory needs the context
  return Decode(logits, n_rows, vocab_size, MaskContext(), out);
}

DecodeStatus Decoder::Decode(const float* logits, size_t n_rows, size_t vocab_size, const MaskContext& context,
                             std::vector<Decoded>* out) const {
  out->clear();
  if (vocab_size != impl_->eligible.size() || (logits == nullptr && n_rows > 0)) {
    return DecodeStatus::kBadShape;
  }
  const Memory* memory = impl_->memory;
  if (memory != nullptr && (context.n_masks != n_rows || context.ids == nullptr || context.mask_positions == nullptr)) {
    return DecodeStatus::kBadShape;
  }
  for (size_t r = 0; r < n_rows; ++r) {
    if (!RowIsUsable(logits + r * vocab_size, vocab_size)) return DecodeStatus::kNonFinite;
  }
  out->resize(n_rows);
  const Impl& impl = *impl_;
  Impl::Scratch scratch;
  std::vector<int32_t>& candidates = scratch.candidates;
  for (size_t r = 0; r < n_rows; ++r) {
    const float* row = logits + r * vocab_size;
    const uint8_t* allowed = context.allowed != nullptr ? context.allowed[r] : nullptr;
    if (allowed != nullptr) {
      // The blank's constraint: tokens it does not admit get probability 0, so the softmax
      // renormalises over the admitted ones.
      scratch.constrained.resize(vocab_size);
      for (size_t id = 0; id < vocab_size; ++id) scratch.constrained[id] = allowed[id] ? row[id] : -INFINITY;
      row = scratch.constrained.data();
      if (!RowIsUsable(row, vocab_size)) continue;  // nothing admitted has a probability: no candidates
    }
    if (memory == nullptr) {
      impl.DecodeRow(row, vocab_size, nullptr, &scratch, &(*out)[r]);
      continue;
    }
    // Candidates the memory scores: the model's best, and what the memory proposes itself.
    decoder::SelectTopK(row, impl.eligible.data(), vocab_size,
                        static_cast<size_t>(std::max(impl.fusion.model_candidates, 0)), &scratch.top);
    candidates.clear();
    for (const decoder::ScoredId& scored : scratch.top) candidates.push_back(scored.id);
    memory->ProposeCandidates(context.ids, context.n_ids, context.mask_positions, context.n_masks, r, &candidates);
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                    [&impl, vocab_size, allowed](int32_t id) {
                                      return id < 0 || static_cast<size_t>(id) >= vocab_size || !impl.eligible[id] ||
                                             (allowed != nullptr && !allowed[id]);
                                    }),
                     candidates.end());
    memory->Evidence(context.ids, context.n_ids, context.mask_positions, context.n_masks, r, candidates.data(),
                     candidates.size(), impl.fusion.min_hit_strength, &scratch.evidence);
    scratch.fused.resize(vocab_size);
    const float model_weight = impl.fusion.model, unigram_weight = impl.fusion.unigram;
    const float* unigram = memory->UnigramLogProbs();
    for (size_t id = 0; id < vocab_size; ++id) {
      scratch.fused[id] = row[id] == -INFINITY ? row[id] : model_weight * row[id] + unigram_weight * unigram[id];
    }
    for (const CandidateEvidence& evidence : scratch.evidence) {
      scratch.fused[evidence.id] += FusionGain(evidence, impl.fusion);
    }
    if (impl.fusion.floor > 0.0f) MixInFloor(impl.fusion.floor, row, &scratch.fused);
    impl.DecodeRow(scratch.fused.data(), vocab_size, &scratch.evidence, &scratch, &(*out)[r]);
  }
  return DecodeStatus::kOk;
}

}  // namespace tiankong
