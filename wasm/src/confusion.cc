// ConfusionSets (tiankong.h "Spelling check"): which characters a wrong one may have been typed
// for. Wrong characters in Chinese text are mostly homophones an IME offered (在/再, 以/已), near
// homophones of a regional accent or a fuzzy-pinyin IME (四/是, 年/连, 很/狠), and look-alikes
// (未/末, 己/已); the spelling check scores only these against the original, which keeps it from
// "correcting" a character into any other that merely fits the context.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "pinyin.h"
#include "pinyin_table.h"
#include "shape.h"
#include "tiankong/tiankong.h"
#include "utf8.h"

namespace tiankong {
namespace {

// Readings of a character that take part (likeliest first): a polyphone's third and later
// readings are rare, and would tie it to every syllable it ever had.
constexpr size_t kReadingsUsed = 2;

// The syllables a listener or a fuzzy-pinyin IME confuses with `name`: one swap of z/zh, c/ch,
// s/sh or n/l at the start, or of an/ang, en/eng, in/ing at the end (only those Mandarin has).
std::vector<int> NearSyllables(std::string_view name) {
  std::vector<std::string> variants;
  const std::string s(name);
  if (s.size() >= 2 && (s[0] == 'z' || s[0] == 'c' || s[0] == 's') && s[1] == 'h') {
    variants.push_back(s.substr(0, 1) + s.substr(2));
  } else if (!s.empty() && (s[0] == 'z' || s[0] == 'c' || s[0] == 's')) {
    variants.push_back(s.substr(0, 1) + "h" + s.substr(1));
  } else if (!s.empty() && (s[0] == 'n' || s[0] == 'l')) {
    variants.push_back(std::string(1, s[0] == 'n' ? 'l' : 'n') + s.substr(1));
  }
  auto ends_with = [&s](std::string_view tail) {
    return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (ends_with("ang") || ends_with("eng") || ends_with("ing")) {
    variants.push_back(s.substr(0, s.size() - 1));
  } else if (ends_with("an") || ends_with("en") || ends_with("in")) {
    variants.push_back(s + "g");
  }
  std::vector<int> out;
  for (const std::string& variant : variants) {
    pinyin::Reading reading;
    if (pinyin::Parse(variant, &reading) && reading.syllable >= 0) out.push_back(reading.syllable);
  }
  return out;
}

}  // namespace

struct ConfusionSets::Impl {
  std::vector<char32_t> char_of;                  // by token id; 0: not one character
  std::unordered_map<char32_t, int32_t> id_of;    // one-character tokens
  std::vector<std::vector<int32_t>> by_syllable;  // token ids, ascending
  std::vector<std::vector<int>> near;             // by syllable
};

ConfusionSets::ConfusionSets(const Tokenizer& tokenizer) : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  const int32_t vocab = tokenizer.VocabSize();
  impl.char_of.assign(static_cast<size_t>(vocab), 0);
  impl.by_syllable.resize(pinyin_table::kSyllableCount);
  impl.near.resize(pinyin_table::kSyllableCount);
  for (int syllable = 0; syllable < pinyin_table::kSyllableCount; ++syllable) {
    impl.near[syllable] = NearSyllables(pinyin::SyllableName(syllable));
  }
  const int32_t specials[] = {tokenizer.PadId(), tokenizer.UnkId(), tokenizer.ClsId(), tokenizer.SepId(),
                              tokenizer.MaskId()};
  std::vector<text::AlignedChar> chars;
  for (int32_t id = 0; id < vocab; ++id) {
    if (std::find(std::begin(specials), std::end(specials), id) != std::end(specials)) continue;
    chars.clear();
    size_t error_offset = 0;
    if (!text::DecodeUtf8(tokenizer.IdToToken(id), &chars, &error_offset) || chars.size() != 1) continue;
    const char32_t c = chars[0].cp;
    impl.char_of[static_cast<size_t>(id)] = c;
    impl.id_of.emplace(c, id);
    std::vector<pinyin::Reading> readings = pinyin::ReadingsOf(c);
    std::vector<int> syllables;
    for (size_t r = 0; r < readings.size() && r < kReadingsUsed; ++r) syllables.push_back(readings[r].syllable);
    std::sort(syllables.begin(), syllables.end());
    syllables.erase(std::unique(syllables.begin(), syllables.end()), syllables.end());
    for (const int syllable : syllables) impl.by_syllable[static_cast<size_t>(syllable)].push_back(id);
  }
}

ConfusionSets::~ConfusionSets() = default;

std::vector<Confusion> ConfusionSets::Of(int32_t id) const {
  const Impl& impl = *impl_;
  std::vector<Confusion> out;
  if (id < 0 || static_cast<size_t>(id) >= impl.char_of.size() || impl.char_of[static_cast<size_t>(id)] == 0) {
    return out;
  }
  const char32_t c = impl.char_of[static_cast<size_t>(id)];
  std::unordered_map<int32_t, ConfusionKind> kinds;  // the closest kind of each token
  auto add = [&](int32_t other, ConfusionKind kind) {
    if (other == id) return;
    auto [it, inserted] = kinds.emplace(other, kind);
    if (!inserted && kind < it->second) it->second = kind;
  };
  std::vector<pinyin::Reading> readings = pinyin::ReadingsOf(c);
  if (readings.size() > kReadingsUsed) readings.resize(kReadingsUsed);
  for (const pinyin::Reading& reading : readings) {
    for (const int32_t other : impl.by_syllable[static_cast<size_t>(reading.syllable)]) {
      add(other, ConfusionKind::kSound);
    }
    for (const int near : impl.near[static_cast<size_t>(reading.syllable)]) {
      for (const int32_t other : impl.by_syllable[static_cast<size_t>(near)]) add(other, ConfusionKind::kNearSound);
    }
  }
  for (const shape::Similar& similar : shape::SimilarShapes(c)) {
    const auto it = impl.id_of.find(similar.c);
    if (it != impl.id_of.end()) add(it->second, ConfusionKind::kShape);
  }
  out.reserve(kinds.size());
  for (const auto& [other, kind] : kinds) out.push_back(Confusion{other, kind});
  std::sort(out.begin(), out.end(), [](const Confusion& a, const Confusion& b) {
    return a.kind < b.kind || (a.kind == b.kind && a.id < b.id);
  });
  return out;
}

}  // namespace tiankong
