// Constraints on a blank by sound (tiankong.h "Pinyin"): parsing what a user types after
// "MASK:", matching characters against the pinyin table, and readings for display.
#include <algorithm>
#include <string>
#include <vector>

#include "pinyin.h"
#include "tiankong/tiankong.h"
#include "utf8.h"

namespace tiankong {
namespace {

// Full-width ASCII (what a Chinese keyboard in full-width mode types) folded to ASCII, and
// spaces trimmed; other characters kept.
std::string FoldFullWidth(std::string_view text) {
  std::vector<text::AlignedChar> chars;
  size_t error_offset = 0;
  if (!text::DecodeUtf8(text, &chars, &error_offset)) return std::string(text);
  std::string out;
  for (const text::AlignedChar& c : chars) {
    char32_t cp = c.cp;
    if (cp >= 0xFF01 && cp <= 0xFF5E) cp -= 0xFEE0;
    if (cp == 0x3000) cp = ' ';
    text::AppendUtf8(cp, &out);
  }
  const size_t begin = out.find_first_not_of(' ');
  if (begin == std::string::npos) return std::string();
  return out.substr(begin, out.find_last_not_of(' ') + 1 - begin);
}

// The one code point `token` consists of, or 0 (several, none, or invalid UTF-8).
char32_t SoleCodePoint(std::string_view token, std::vector<text::AlignedChar>* scratch) {
  scratch->clear();
  size_t error_offset = 0;
  if (!text::DecodeUtf8(token, scratch, &error_offset) || scratch->size() != 1) return 0;
  return (*scratch)[0].cp;
}

}  // namespace

bool ParseSoundConstraint(std::string_view text, SoundConstraint* out, std::string* error) {
  const std::string folded = FoldFullWidth(text);
  if (folded.empty()) {
    *error = "the constraint is empty: write a syllable (shang, shang4 or shàng) or 平 / 仄";
    return false;
  }
  if (folded == "平" || folded == "仄") {
    *out = SoundConstraint{};
    out->tone_class = folded == "平" ? 1 : 2;
    return true;
  }
  pinyin::Reading reading;
  if (pinyin::Parse(folded, &reading)) {
    *out = SoundConstraint{};
    out->syllable = reading.syllable;
    out->tone = reading.tone;
    return true;
  }
  const char last = folded.back();
  if (last >= '0' && last <= '9' && (last == '0' || last > '5')) {
    *error = "\"" + folded + "\" has tone " + last + ": tones are 1-4, and 5 for the neutral tone";
  } else {
    *error = "\"" + folded + "\" is not a pinyin syllable (write e.g. shang, shang4 or shàng; ü as ü, v or u:)";
  }
  return false;
}

std::string FormatSoundConstraint(const SoundConstraint& constraint) {
  if (constraint.tone_class != 0) return constraint.tone_class == 1 ? "平" : "仄";
  return pinyin::Format({constraint.syllable, constraint.tone}, true);
}

namespace {
// Whether one reading meets the constraint (the rule SoundAccepts applies to every reading).
bool Meets(const SoundConstraint& constraint, const pinyin::Reading& reading) {
  if (constraint.tone_class != 0) return static_cast<int>(pinyin::ClassOf(reading.tone)) == constraint.tone_class;
  return reading.syllable == constraint.syllable && (constraint.tone == 0 || constraint.tone == reading.tone);
}
}  // namespace

bool SoundAccepts(const SoundConstraint& constraint, char32_t c) {
  for (const pinyin::Reading& reading : pinyin::ReadingsOf(c)) {
    if (Meets(constraint, reading)) return true;
  }
  return false;
}

std::vector<uint8_t> SoundEligibility(const Tokenizer& tokenizer, const SoundConstraint& constraint) {
  std::vector<uint8_t> eligible(static_cast<size_t>(tokenizer.VocabSize()), 0);
  std::vector<text::AlignedChar> scratch;
  for (int32_t id = 0; id < tokenizer.VocabSize(); ++id) {
    const char32_t c = SoleCodePoint(tokenizer.IdToToken(id), &scratch);
    eligible[static_cast<size_t>(id)] = c != 0 && SoundAccepts(constraint, c) ? 1 : 0;
  }
  return eligible;
}

std::vector<CharReadings> ReadingsOfText(std::string_view text, bool marks, const SoundConstraint* prefer) {
  std::vector<CharReadings> out;
  std::vector<text::AlignedChar> chars;
  size_t error_offset = 0;
  text::DecodeUtf8(text, &chars, &error_offset);  // what decodes before an invalid byte is used
  for (const text::AlignedChar& c : chars) {
    std::vector<pinyin::Reading> readings = pinyin::ReadingsOf(c.cp);
    if (readings.empty()) continue;
    if (prefer != nullptr) {
      std::stable_partition(readings.begin(), readings.end(),
                            [prefer](const pinyin::Reading& reading) { return Meets(*prefer, reading); });
    }
    CharReadings& entry = out.emplace_back();
    entry.span = c.source;
    for (const pinyin::Reading& reading : readings) {
      entry.readings.push_back(pinyin::Format(reading, marks));
      entry.tones.push_back(static_cast<int8_t>(reading.tone));
      entry.standard.push_back(reading.standard ? 1 : 0);
      entry.classes.push_back(static_cast<uint8_t>(pinyin::ClassOf(reading.tone)));
    }
  }
  return out;
}

}  // namespace tiankong
