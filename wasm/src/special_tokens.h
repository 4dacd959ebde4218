// Special tokens typed in the raw text: found before normalization and never split, like
// Hugging Face added tokens with normalized=false, plus forgiving spellings of the mask.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "utf8.h"

namespace tiankong {
namespace text {

struct SpecialTokenIds {
  int32_t pad, unk, cls, sep, mask;
};

// One special token found in the input: chars [begin, end) of the decoded text.
struct SpecialMatch {
  size_t begin, end;
  int32_t id;
};

// Appends to *out, left to right and without overlaps, every special token in `chars`:
// - exactly "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]" (case-sensitive, as HF matches them);
// - any spelling of the mask a user may type: "mask" in any case, in ASCII or full-width
//   letters, between "[" or "［" and "]" or "］" (e.g. "[mask]", "［MASK］", "[Mask］").
// Every match covers exactly what the user typed, so its offsets point at it.
void FindSpecialTokens(const std::vector<AlignedChar>& chars, const SpecialTokenIds& ids,
                       std::vector<SpecialMatch>* out);

}  // namespace text
}  // namespace tiankong
