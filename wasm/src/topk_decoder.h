// Internal stages of tiankong::Decoder (declared in tiankong/tiankong.h): the
// per-vocabulary eligibility mask and the bounded top-k selection over one row.
// Exposed here so they can be tested on their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tiankong/tiankong.h"

namespace tiankong {
namespace decoder {

// True for "[unusedN]" (N = one or more ASCII digits), BERT's reserved slots.
bool IsUnusedSlot(std::string_view token);

// True for a WordPiece continuation piece: "##" followed by at least one byte.
bool IsContinuationPiece(std::string_view token);

// eligible[id] == 1 when `options` allow proposing token `id`; size == VocabSize().
// Ids in allow_ids/deny_ids outside [0, VocabSize()) are ignored (the bindings
// reject them with a message before they get here).
std::vector<uint8_t> BuildEligibility(const Tokenizer& tokenizer, const DecodeOptions& options);

struct ScoredId {
  float logit;
  int32_t id;
};

// The k best eligible entries of row[0..n), best first: larger logit first, equal
// logits by smaller id. -inf entries (probability 0) are never selected, so fewer
// than k may come back. Uses a bounded heap: O(n + m log k) for m heap updates, and
// skips entries that cannot beat the heap's worst a SIMD vector at a time.
// `out` is overwritten (its capacity is reused across rows).
void SelectTopK(const float* row, const uint8_t* eligible, size_t n, size_t k, std::vector<ScoredId>* out);

}  // namespace decoder
}  // namespace tiankong
