#include "pre_tokenizer.h"

#include "unicode_tables.h"

namespace tiankong {
namespace text {

void PreTokenize(const std::vector<AlignedChar>& chars, size_t begin, size_t end, std::vector<WordRange>* words) {
  size_t word_start = begin;
  for (size_t i = begin; i < end; ++i) {
    const uint8_t flags = unicode::Flags(chars[i].cp);
    if (!(flags & (unicode::kWhitespace | unicode::kPunctuation))) continue;
    if (word_start < i) words->push_back({word_start, i});
    if (!(flags & unicode::kWhitespace)) words->push_back({i, i + 1});  // punctuation
    word_start = i + 1;
  }
  if (word_start < end) words->push_back({word_start, end});
}

}  // namespace text
}  // namespace tiankong
