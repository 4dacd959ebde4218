#include "pinyin.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "pinyin_table.h"

namespace tiankong::pinyin {
namespace {

namespace table = tiankong::pinyin_table;

// Tone marks as UTF-8, per vowel, tones 1-4.
struct MarkedVowel {
  const char* plain;
  const char* marked[4];
};
constexpr MarkedVowel kVowels[] = {
    {"a", {"ā", "á", "ǎ", "à"}}, {"e", {"ē", "é", "ě", "è"}}, {"i", {"ī", "í", "ǐ", "ì"}},
    {"o", {"ō", "ó", "ǒ", "ò"}}, {"u", {"ū", "ú", "ǔ", "ù"}}, {"ü", {"ǖ", "ǘ", "ǚ", "ǜ"}},
    {"ê", {"ê̄", "ế", "ê̌", "ề"}}, {"m", {"m̄", "ḿ", "m̌", "m̀"}}, {"n", {"n̄", "ń", "ň", "ǹ"}},
};

int FindSyllable(std::string_view name) {
  // kSyllables is sorted by byte value (the generator sorts Python strings by code point, which
  // orders UTF-8 bytes the same way).
  const char* const* begin = table::kSyllables;
  const char* const* end = table::kSyllables + table::kSyllableCount;
  const char* const* it =
      std::lower_bound(begin, end, name, [](const char* a, std::string_view b) { return std::string_view(a) < b; });
  return it != end && std::string_view(*it) == name ? static_cast<int>(it - begin) : -1;
}

}  // namespace

std::vector<Reading> ReadingsOf(char32_t c) {
  std::vector<Reading> out;
  const uint32_t* end = table::kCodePoints + table::kCharCount;
  const uint32_t* it = std::lower_bound(table::kCodePoints, end, static_cast<uint32_t>(c));
  if (it == end || *it != c) return out;
  size_t i = static_cast<size_t>(it - table::kCodePoints);
  for (size_t r = table::kOffsets[i]; r < table::kOffsets[i + 1]; ++r) {
    out.push_back({table::kReadings[r] / 8, table::kReadings[r] % 8, table::kStandard[r] != 0});
  }
  return out;
}

std::string_view SyllableName(int syllable) {
  return syllable >= 0 && syllable < table::kSyllableCount ? table::kSyllables[syllable] : std::string_view();
}

bool Parse(std::string_view text, Reading* out) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::string letters;
  int tone = 0;
  size_t i = 0;
  while (i < text.size()) {
    unsigned char b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      char ch = static_cast<char>(b >= 'A' && b <= 'Z' ? b - 'A' + 'a' : b);
      if (ch >= '1' && ch <= '5') {
        if (tone != 0 || i + 1 != text.size()) return false;  // one tone, at the end
        tone = ch - '0';
      } else if (ch == 'v') {
        letters += "ü";
      } else if (ch == ':' && !letters.empty() && letters.back() == 'u') {
        letters.replace(letters.size() - 1, 1, "ü");  // "u:" spelling of ü
      } else if (ch >= 'a' && ch <= 'z') {
        letters += ch;
      } else {
        return false;
      }
      ++i;
      continue;
    }
    // Combining marks after a letter (decomposed input: "u" U+0308 U+0301, "m" U+0304).
    if (b == 0xCC && i + 1 < text.size()) {
      unsigned char c = static_cast<unsigned char>(text[i + 1]);
      int mark = c == 0x84 ? 1 : c == 0x81 ? 2 : c == 0x8C ? 3 : c == 0x80 ? 4 : 0;
      if (mark && !letters.empty()) {
        if (tone != 0) return false;
        tone = mark;
        i += 2;
        continue;
      }
      if (c == 0x88 && !letters.empty() && letters.back() == 'u') {
        letters.replace(letters.size() - 1, 1, "ü");
        i += 2;
        continue;
      }
      return false;
    }
    // A precomposed marked vowel or ü/ê (UTF-8).
    bool matched = false;
    for (const MarkedVowel& v : kVowels) {
      for (int t = 0; t < 5 && !matched; ++t) {
        const char* spelling = t < 4 ? v.marked[t] : v.plain;
        size_t n = std::strlen(spelling);
        if (static_cast<unsigned char>(spelling[0]) < 0x80 && t == 4) continue;  // ASCII handled above
        if (text.compare(i, n, spelling) == 0) {
          // The longest spelling wins: "ê̄" starts with "ê".
          if (t == 4) {
            bool longer = false;
            for (int u = 0; u < 4; ++u) longer |= text.compare(i, std::strlen(v.marked[u]), v.marked[u]) == 0;
            if (longer) continue;
          }
          if (t < 4) {
            if (tone != 0) return false;
            tone = t + 1;
          }
          letters += v.plain;
          i += n;
          matched = true;
        }
      }
      if (matched) break;
    }
    if (!matched) return false;
  }
  int syllable = FindSyllable(letters);
  if (syllable < 0) return false;
  *out = {syllable, tone};
  return true;
}

std::string Format(const Reading& reading, bool marks) {
  std::string name(SyllableName(reading.syllable));
  if (name.empty()) return name;
  if (!marks) return reading.tone ? name + static_cast<char>('0' + reading.tone) : name;
  if (reading.tone < 1 || reading.tone > 4) return name;
  // Where the mark goes: a or e if present, o of "ou", else the last vowel (standard rule);
  // syllables without a vowel (m, n, ng, hm, hng) mark their m or n.
  auto find = [&](std::string_view v) { return name.find(v); };
  size_t at = std::string::npos;
  std::string_view vowel;
  for (std::string_view v : {"a", "e", "ê"}) {
    if ((at = find(v)) != std::string::npos) {
      vowel = v;
      break;
    }
  }
  if (at == std::string::npos && (at = find("ou")) != std::string::npos) vowel = "o";
  if (at == std::string::npos) {
    size_t best = std::string::npos;
    for (std::string_view v : {"i", "o", "u", "ü"}) {
      size_t p = name.rfind(v);
      if (p != std::string::npos && (best == std::string::npos || p > best)) {
        best = p;
        vowel = v;
      }
    }
    at = best;
  }
  if (at == std::string::npos) {
    for (std::string_view v : {"m", "n"}) {
      if ((at = find(v)) != std::string::npos) {
        vowel = v;
        break;
      }
    }
  }
  if (at == std::string::npos) return name;
  for (const MarkedVowel& v : kVowels) {
    if (vowel == v.plain) return name.replace(at, vowel.size(), v.marked[reading.tone - 1]);
  }
  return name;
}

ToneClass ClassOf(int tone) {
  if (tone == 1 || tone == 2) return ToneClass::kPing;
  if (tone == 3 || tone == 4) return ToneClass::kZe;
  return ToneClass::kNone;
}

bool Matches(char32_t c, const Reading& want) {
  for (const Reading& r : ReadingsOf(c)) {
    if (r.syllable == want.syllable && (want.tone == 0 || want.tone == r.tone)) return true;
  }
  return false;
}

}  // namespace tiankong::pinyin
