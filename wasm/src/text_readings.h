// The readings the idiom dictionary gives the characters of the memory's idioms, where they are not
// the character's likeliest reading in the pinyin table (丢三落四: 落 là, not luò). Only those are
// stored (a few thousand of ~118 000 idiom characters); every other unit reads as its character's
// first reading, so the section stays small enough for the first-visit part of a split memory.
//
// Section layout (memory_format.h conventions), kSectionTextReadings:
//   u32 count, u32 string_bytes
//   u32 entry[count][2]      unit position in the text index (ascending, unique), string offset
//   char strings[string_bytes]   NUL-terminated readings with tone numbers ("la4"), offset 0 = ""
//
// A memory without the section (built before it existed) simply has no dictionary readings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memory_format.h"
#include "text_index.h"

namespace tiankong {
namespace memory {

// Builds the section from the texts' `readings` (per id: "" or a tone-number reading), at the
// unit positions BuildTextIndex gives the same texts (TextBegins).
std::vector<uint8_t> BuildTextReadings(const std::vector<IndexedText>& texts);

// Lines up an idiom's dictionary reading ("diū sān là sì", syllables separated by spaces, tone
// marks or numbers) with its tokens (`pieces`: each token's original text, UTF-8) and returns
// per token what BuildTextReadings stores: the syllable in tone numbers ("la4") where it is a
// reading the pinyin table has for that character but not its first one, else "". All "" (and
// *aligned false) when the counts differ or a token is not one character; a syllable the table
// does not know for its character (a slip of the dictionary) is "" too.
//
//   DictionaryReadings({"丢", "三", "落", "四"}, "diū sān là sì", &aligned) == {"", "", "la4", ""}
std::vector<std::string> DictionaryReadings(const std::vector<std::string>& pieces, const std::string& pinyin,
                                            bool* aligned);

class TextReadings {
 public:
  // Checks sizes, that units ascend below `unit_count` and that every string offset starts a
  // string inside the section.
  bool Parse(const Section& section, size_t unit_count, std::string* error);

  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  // The stored reading of `unit` ("la4"), or nullptr when none is stored for it.
  const char* At(uint32_t unit) const;

 private:
  size_t count_ = 0, string_bytes_ = 0;
  const uint32_t* entries_ = nullptr;
  const char* strings_ = nullptr;
};

}  // namespace memory
}  // namespace tiankong
