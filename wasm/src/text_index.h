// The memory's exact index of famous texts and idioms: every text as token ids, a suffix array
// over them, and each text's metadata (work, title, author).
//
// Section layout (memory_format.h conventions):
//   u32 text_count, u32 unit_count, u32 string_bytes, u32 unknown_count
//   u16 unit[unit_count]            texts back to back, kSeparator between texts
//   u32 suffix_count, u8 suffix[suffix_count][3]   every non-separator position (3 bytes, little-
//                                   endian), sorted by the units from there on (the first 64; ties
//                                   by position); the index holds fewer than 2^24 units
//   u8  clause_end[ceil(unit_count/8)]    bit set: the unit is punctuation that ends a clause
//   u8  sentence_end[ceil(unit_count/8)]  bit set: the unit ends a sentence (。！？；…)
//   u32 text[text_count][2]         begin (a text ends before the next one's separator), metadata
//                                   row, or kIdiom for an idiom (its title is its own text)
//   u32 meta_count, u32 meta[meta_count][3]   work, title, author (string offsets)
//   u32 unknown[unknown_count][2]   unit position, string offset: the original text of [UNK] units
//   char strings[string_bytes]      NUL-terminated UTF-8
//
// Matching (Match): the caller passes a window of the query around one blank, as token ids with
// kWildcard for other blanks and kBoundary where the window stops. The index finds every text
// passage that agrees with the window around the blank and reports, per passage, the token at the
// blank and how many known tokens agree in one unbroken stretch through the blank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memory_format.h"

namespace tiankong {
namespace memory {

constexpr uint16_t kSeparator = 0xFFFF;
constexpr int32_t kWildcard = -1;  // another [MASK]: matches any unit, counts for nothing
constexpr int32_t kBoundary = -2;  // the window ends here (special token, [UNK], edge)
constexpr uint32_t kIdiom = 0xFFFFFFFF;

struct IndexHit {
  int32_t token = 0;     // the unit of the text at the blank: the candidate it supports
  int32_t text = 0;      // which text
  uint32_t unit = 0;     // position of that unit in the unit array
  int32_t strength = 0;  // known window tokens agreeing, in one stretch through the blank
  bool whole = false;    // the stretch covers a whole idiom or clause of the text
};

struct IndexedText {
  std::vector<int32_t> ids;                               // token ids (no specials)
  std::vector<uint8_t> clause_end;                        // per id: 1 when it ends a clause
  std::vector<uint8_t> sentence_end;                      // per id: 1 when it ends a sentence
  std::vector<std::pair<uint32_t, std::string>> unknown;  // [UNK] positions (within ids) and their text
  std::string work, title, author;
  bool idiom = false;
  std::vector<std::string> readings;  // per id: the dictionary's reading where stored (text_readings.h)
};

// Where each text starts in the index's unit array: back to back, one kSeparator between two.
std::vector<uint32_t> TextBegins(const std::vector<IndexedText>& texts);

// Builds the section; ids must be < kSeparator. Empty when the texts hold 2^24 tokens or more.
std::vector<uint8_t> BuildTextIndex(const std::vector<IndexedText>& texts);

class TextIndex {
 public:
  // Checks sizes, bounds and that every unit is a token id below `vocab_size` (or kSeparator).
  bool Parse(const Section& section, size_t vocab_size, std::string* error);

  size_t text_count() const { return text_count_; }
  size_t unit_count() const { return unit_count_; }
  // Appends hits for window[target] (see the header comment); at most one per distinct token
  // (the strongest, then whole, then the lowest text number), sorted by strength descending.
  // Only hits of at least `min_strength` known tokens are reported, or of 2 when the stretch
  // covers a whole idiom or clause (and never of none). Known tokens further out that disagree
  // with a passage do not hide it: only the stretch through the blank counts.
  void Match(const int32_t* window, size_t n, size_t target, int32_t min_strength, std::vector<IndexHit>* hits) const;

  // Metadata of a text ("" for idioms, whose work and title the caller supplies).
  const char* Work(int32_t text) const;
  const char* Title(int32_t text) const;
  const char* Author(int32_t text) const;
  bool IsIdiom(int32_t text) const;
  // [begin, end) unit positions of a text.
  void Bounds(int32_t text, uint32_t* begin, uint32_t* end) const;
  // The sentence around `unit` of `text`: [begin, end) unit positions.
  void Sentence(int32_t text, uint32_t unit, uint32_t* begin, uint32_t* end) const;
  uint16_t Unit(uint32_t position) const { return units_[position]; }
  // The original text of an [UNK] unit, or nullptr when the unit is not one.
  const char* UnknownText(uint32_t position) const;

  // Suffix-array range of positions whose units start with pattern[0..n): [*lo, *hi).
  void Range(const int32_t* pattern, size_t n, uint32_t* lo, uint32_t* hi) const;

 private:
  // The text whose [begin, end) holds `position` (binary search), or -1.
  int32_t TextAt(uint32_t position) const;
  bool Bit(const uint8_t* bits, uint32_t i) const { return (bits[i >> 3] >> (i & 7)) & 1; }
  const char* String(uint32_t offset) const;
  const char* MetaString(int32_t text, size_t field) const;
  uint32_t SuffixAt(size_t i) const {
    const uint8_t* p = suffix_ + 3 * i;
    return p[0] | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16);
  }

  size_t text_count_ = 0, unit_count_ = 0, string_bytes_ = 0, unknown_count_ = 0, suffix_count_ = 0, meta_count_ = 0;
  const uint16_t* units_ = nullptr;
  const uint8_t* suffix_ = nullptr;  // 3 bytes per entry
  const uint8_t* clause_end_ = nullptr;
  const uint8_t* sentence_end_ = nullptr;
  const uint32_t* texts_ = nullptr;
  const uint32_t* meta_ = nullptr;
  const uint32_t* unknown_ = nullptr;
  const char* strings_ = nullptr;
};

}  // namespace memory
}  // namespace tiankong
