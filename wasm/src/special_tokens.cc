#include "special_tokens.h"

#include <cstring>

namespace tiankong {
namespace text {
namespace {

constexpr char32_t kFullWidthOpen = 0xFF3B;    // ［
constexpr char32_t kFullWidthClose = 0xFF3D;   // ］
constexpr char32_t kLenticularOpen = 0x3010;   // 【 (what a Chinese IME types for "[")
constexpr char32_t kLenticularClose = 0x3011;  // 】
constexpr char32_t kFullWidthColon = 0xFF1A;   // ：
constexpr size_t kLongestName = 4;             // MASK

bool IsOpen(char32_t c) { return c == '[' || c == kFullWidthOpen || c == kLenticularOpen; }
bool IsClose(char32_t c) { return c == ']' || c == kFullWidthClose || c == kLenticularClose; }

// The ASCII upper-case letter `c` spells (ASCII or full-width Latin, any case), else 0.
char FoldLetter(char32_t c) {
  if (c >= 'A' && c <= 'Z') return static_cast<char>(c);
  if (c >= 'a' && c <= 'z') return static_cast<char>(c - 'a' + 'A');
  if (c >= 0xFF21 && c <= 0xFF3A) return static_cast<char>(c - 0xFF21 + 'A');
  if (c >= 0xFF41 && c <= 0xFF5A) return static_cast<char>(c - 0xFF41 + 'A');
  return 0;
}

// The mask's constraint after its name, chars[colon] being ':' or '：': fills *match's constraint
// span and returns the index of the closing bracket, or 0 when there is no well-formed constraint.
size_t MatchConstraint(const std::vector<AlignedChar>& chars, size_t colon, SpecialMatch* match) {
  if (chars[colon].cp != ':' && chars[colon].cp != kFullWidthColon) return 0;
  for (size_t j = colon + 1; j < chars.size() && j <= colon + 1 + kMaxConstraintChars; ++j) {
    if (IsClose(chars[j].cp)) {
      match->constrained = true;
      match->constraint_begin = colon + 1;
      match->constraint_end = j;
      return j;
    }
    if (IsOpen(chars[j].cp) || chars[j].cp == '\n') return 0;
  }
  return 0;
}

// Length of the special token starting at chars[i] (0 if none); its id (and a mask's constraint)
// go to *match.
size_t MatchAt(const std::vector<AlignedChar>& chars, size_t i, const SpecialTokenIds& ids, SpecialMatch* match) {
  const bool ascii_open = chars[i].cp == '[';
  if (!IsOpen(chars[i].cp)) return 0;
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
  if (std::strcmp(name, "MASK") == 0) {
    if (!IsClose(chars[j].cp) && (j = MatchConstraint(chars, j, match)) == 0) return 0;
    match->id = ids.mask;
    return j + 1 - i;
  }
  const bool ascii_close = chars[j].cp == ']';
  if (!IsClose(chars[j].cp)) return 0;
  exact = exact && ascii_close;
  const size_t length = j + 1 - i;
  if (!exact) return 0;
  struct Named {
    const char* name;
    int32_t id;
  };
  for (const Named& named :
       {Named{"PAD", ids.pad}, Named{"UNK", ids.unk}, Named{"CLS", ids.cls}, Named{"SEP", ids.sep}}) {
    if (std::strcmp(name, named.name) == 0) {
      match->id = named.id;
      return length;
    }
  }
  return 0;
}

}  // namespace

void FindSpecialTokens(const std::vector<AlignedChar>& chars, const SpecialTokenIds& ids,
                       std::vector<SpecialMatch>* out) {
  for (size_t i = 0; i < chars.size(); ++i) {
    SpecialMatch match{i, i, -1};
    if (const size_t length = MatchAt(chars, i, ids, &match)) {
      match.end = i + length;
      out->push_back(match);
      i += length - 1;
    }
  }
}

}  // namespace text
}  // namespace tiankong
