#include "text_readings.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "pinyin.h"
#include "utf8.h"

namespace tiankong {
namespace memory {

std::vector<std::string> DictionaryReadings(const std::vector<std::string>& pieces, const std::string& pinyin,
                                            bool* aligned) {
  std::vector<std::string> out(pieces.size());
  *aligned = false;
  std::vector<std::string> syllables;
  std::istringstream words(pinyin);
  for (std::string word; words >> word;) syllables.push_back(word);
  if (syllables.size() != pieces.size()) return out;
  std::vector<char32_t> chars;
  for (const std::string& piece : pieces) {
    std::vector<text::AlignedChar> decoded;
    size_t error_offset = 0;
    if (!text::DecodeUtf8(piece, &decoded, &error_offset) || decoded.size() != 1) return out;
    chars.push_back(decoded[0].cp);
  }
  *aligned = true;
  for (size_t k = 0; k < chars.size(); ++k) {
    pinyin::Reading said;
    if (!pinyin::Parse(syllables[k], &said) || said.tone == 0) continue;
    const std::vector<pinyin::Reading> known = pinyin::ReadingsOf(chars[k]);
    const auto found = std::find(known.begin(), known.end(), said);
    if (found != known.end() && found != known.begin()) out[k] = pinyin::Format(said, /*marks=*/false);
  }
  return out;
}

std::vector<uint8_t> BuildTextReadings(const std::vector<IndexedText>& texts) {
  const std::vector<uint32_t> begins = TextBegins(texts);
  std::vector<uint32_t> entries;
  std::string strings(1, '\0');  // offset 0 = ""
  std::map<std::string, uint32_t> interned;
  for (size_t t = 0; t < texts.size(); ++t) {
    const std::vector<std::string>& readings = texts[t].readings;
    for (size_t k = 0; k < readings.size() && k < texts[t].ids.size(); ++k) {
      if (readings[k].empty()) continue;
      auto [at, added] = interned.emplace(readings[k], static_cast<uint32_t>(strings.size()));
      if (added) {
        strings += readings[k];
        strings.push_back('\0');
      }
      entries.insert(entries.end(), {begins[t] + static_cast<uint32_t>(k), at->second});
    }
  }
  ByteWriter out;
  out.U32(static_cast<uint32_t>(entries.size() / 2));
  out.U32(static_cast<uint32_t>(strings.size()));
  out.Array(entries);
  out.Array(strings.data(), strings.size());
  return out.Take();
}

bool TextReadings::Parse(const Section& section, size_t unit_count, std::string* error) {
  ByteReader reader(section.data, section.size);
  count_ = reader.U32();
  string_bytes_ = reader.U32();
  entries_ = static_cast<const uint32_t*>(reader.Array(count_ * 2, 4));
  strings_ = static_cast<const char*>(reader.Array(string_bytes_, 1));
  const auto fail = [this, error](const char* what) {
    *error = std::string("text readings section is malformed: ") + what;
    count_ = 0;
    return false;
  };
  if (reader.failed() || count_ > section.size) return fail("sizes exceed the section");
  if (string_bytes_ == 0 || strings_[string_bytes_ - 1] != '\0') return fail("strings are not NUL-terminated");
  for (size_t i = 0; i < count_; ++i) {
    const uint32_t unit = entries_[2 * i], offset = entries_[2 * i + 1];
    if (unit >= unit_count) return fail("a unit lies outside the text index");
    if (i > 0 && unit <= entries_[2 * i - 2]) return fail("units do not ascend");
    if (offset == 0 || offset >= string_bytes_ || strings_[offset - 1] != '\0')
      return fail("a reading does not start a string");
  }
  return true;
}

const char* TextReadings::At(uint32_t unit) const {
  size_t lo = 0, hi = count_;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (entries_[2 * mid] < unit) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < count_ && entries_[2 * lo] == unit ? strings_ + entries_[2 * lo + 1] : nullptr;
}

}  // namespace memory
}  // namespace tiankong
