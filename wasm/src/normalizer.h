// Hugging Face BertNormalizer over decoded characters, keeping each output character's
// span in the original input (so token offsets can be mapped back).
#pragma once

#include <vector>

#include "utf8.h"

namespace tiankong {
namespace text {

struct NormalizerOptions {
  bool clean_text = true;            // drop U+0000, U+FFFD and control chars; whitespace -> ' '
  bool handle_chinese_chars = true;  // surround CJK ideographs with spaces
  bool strip_accents = false;        // NFD, then drop non-spacing marks (Mn)
  bool lowercase = false;            // full lowercase mapping (may expand: U+0130 -> i U+0307)
};

// Appends the normalization of chars [begin, end) to *out, in HF's order: clean_text,
// handle_chinese_chars, strip_accents, lowercase. Every output character carries the
// source span of the input character it came from (inserted spaces and expansions share
// it). NFD reorders combining marks within the range only, so call this once per
// maximal run of text (HF normalizes each piece between special tokens on its own).
void Normalize(const AlignedChar* begin, const AlignedChar* end, const NormalizerOptions& options,
               std::vector<AlignedChar>* out);

}  // namespace text
}  // namespace tiankong
