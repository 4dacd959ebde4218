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

// One special token found in the input: chars [begin, end) of the decoded text. A mask written
// with a constraint ("[MASK:shang4]") also has the constraint's chars [constraint_begin,
// constraint_end), between the colon and the closing bracket (possibly empty).
struct SpecialMatch {
  size_t begin, end;
  int32_t id;
  bool constrained = false;
  size_t constraint_begin = 0, constraint_end = 0;
};

// Appends to *out, left to right and without overlaps, every special token in `chars`:
// - exactly "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]" (case-sensitive, as HF matches them);
// - any spelling of the mask a user may type: "mask" in any case, in ASCII or full-width
//   letters, between "[", "［" or "【" and "]", "］" or "】" (e.g. "[mask]", "［MASK］", "【Mask】");
// - a mask with a constraint on its sound: the mask's name, then ":" or "：", then at most
//   kMaxConstraintChars characters without brackets, then a closing bracket ("[MASK:shang4]",
//   "［MASK：平］"). What the constraint says is judged later (sound_constraint.h); here it is only
//   delimited, so "[MASK:xyz]" is still one mask (and a clear error), not text.
// Every match covers exactly what the user typed, so its offsets point at it.
inline constexpr size_t kMaxConstraintChars = 16;

void FindSpecialTokens(const std::vector<AlignedChar>& chars, const SpecialTokenIds& ids,
                       std::vector<SpecialMatch>* out);

}  // namespace text
}  // namespace tiankong
