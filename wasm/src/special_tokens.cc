#include "special_tokens.h"

#include <cstring>

namespace tiankong {
namespace text {
namespace {

constexpr char32_t kFullWidthOpen = 0xFF3B;    // ［
constexpr char32_t kFullWidthClose = 0xFF3D;   // ］
constexpr char32_t kLenticularOpen = 0x3010;   // 【 (what a Chinese IME types for "[")
constexpr char32_t kLenticularClose = 0x3011;  // 】
constexpr size_t kLongestName = 4;             // MASK

// The ASCII upper-case letter `c` spells (ASCII or full-width Latin, any case), else 0.
char FoldLetter(char32_t c) {
  if (c >= 'A' && c <= 'Z') return static_cast<char>(c);
  if (c >= 'a' && c <= 'z') return static_cast<char>(c - 'a' + 'A');
  if (c >= 0xFF21 && c <= 0xFF3A) return static_cast<char>(c - 0xFF21 + 'A');
  if (c >= 0xFF41 && c <= 0xFF5A) return static_cast<char>(c - 0xFF41 + 'A');
  return 0;
}

// Length of the special token starting at chars[i] (0 if none); its id goes to *id.
size_t MatchAt(const std::vector<AlignedChar>& chars, size_t i, const SpecialTokenIds& ids, int32_t* id) {
  const bool ascii_open = chars[i].cp == '[';
  if (!ascii_open && chars[i].cp != kFullWidthOpen && chars[i].cp != kLenticularOpen) return 0;
  char name[kLongestName + 1] = {};
  bool exact = ascii_open;  // exact = plain ASCII upper case, the only form HF knows
  size_t j = i + 1;
  for (size_t k = 0; k < kLongestName && j < chars.size(); ++k, ++j) {
    const char letter = FoldLetter(chars[j].cp);
    if (letter == 0) break;
    exact = exact && chars[j].cp == static_cast<char32_t>(letter);
    name[k] = letter;
  }
  if (j >= chars.size()) return 0;
  const bool ascii_close = chars[j].cp == ']';
  if (!ascii_close && chars[j].cp != kFullWidthClose && chars[j].cp != kLenticularClose) return 0;
  exact = exact && ascii_close;
  const size_t length = j + 1 - i;
  if (std::strcmp(name, "MASK") == 0) {
    *id = ids.mask;
    return length;
  }
  if (!exact) return 0;
  struct Named {
    const char* name;
    int32_t id;
  };
  for (const Named& named :
       {Named{"PAD", ids.pad}, Named{"UNK", ids.unk}, Named{"CLS", ids.cls}, Named{"SEP", ids.sep}}) {
    if (std::strcmp(name, named.name) == 0) {
      *id = named.id;
      return length;
    }
  }
  return 0;
}

}  // namespace

void FindSpecialTokens(const std::vector<AlignedChar>& chars, const SpecialTokenIds& ids,
                       std::vector<SpecialMatch>* out) {
  for (size_t i = 0; i < chars.size(); ++i) {
    int32_t id;
    if (const size_t length = MatchAt(chars, i, ids, &id)) {
      out->push_back({i, i + length, id});
      i += length - 1;
    }
  }
}

}  // namespace text
}  // namespace tiankong
