// Hugging Face BertPreTokenizer: splits normalized text into words.
#pragma once

#include <cstddef>
#include <vector>

#include "utf8.h"

namespace tiankong {
namespace text {

// A word: chars [begin, end) of the normalized text.
struct WordRange {
  size_t begin, end;
};

// Appends to *words the words of chars[begin, end): whitespace (White_Space) separates
// words and is dropped; every punctuation character (Unicode P* or ASCII punctuation,
// e.g. '$', '+', '^', '`') is a word of its own.
void PreTokenize(const std::vector<AlignedChar>& chars, size_t begin, size_t end, std::vector<WordRange>* words);

}  // namespace text
}  // namespace tiankong
