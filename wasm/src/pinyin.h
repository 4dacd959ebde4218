// Mandarin readings of characters (pinyin_table.h, generated from Unihan) and the pinyin
// spellings users type: tone numbers or tone marks, ü as ü, v or u: ("lü4", "lv4", "lǜ").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tiankong::pinyin {

// A syllable (index into the table's syllables, -1: none) and its tone: 1-4, 5 = neutral,
// 0 = not given (a constraint that accepts any tone). `standard`: modern Mandarin has it (not
// only a classical dictionary's, see scripts/gen-pinyin-table); it takes no part in equality.
struct Reading {
  int syllable = -1;
  int tone = 0;
  bool standard = true;
  bool operator==(const Reading& other) const { return syllable == other.syllable && tone == other.tone; }
};

// The readings of `c`, likeliest first (tone always 1-5); empty when the table has none.
std::vector<Reading> ReadingsOf(char32_t c);

// Parses one typed syllable: "shang" (tone 0), "shang4", "shàng", "lv", "lü", "lu:3", "nǚ", "ê1";
// case-insensitive, surrounding spaces ignored. False (out untouched) for anything else,
// including a syllable Mandarin does not have ("shangg") or two tones ("shàng4").
bool Parse(std::string_view text, Reading* out);

// The toneless syllable ("shang", "nü").
std::string_view SyllableName(int syllable);

// "shàng" (marks = true; neutral tone unmarked) or "shang4" (marks = false; neutral "shang5").
std::string Format(const Reading& reading, bool marks = true);

// 平 (tones 1-2) or 仄 (3-4) of 中华新韵; 0 for the neutral tone (neither).
enum class ToneClass { kNone = 0, kPing = 1, kZe = 2 };
ToneClass ClassOf(int tone);

// Whether `c` has a reading matching `want` (tone 0 matches any tone).
bool Matches(char32_t c, const Reading& want);

}  // namespace tiankong::pinyin
