// Builds memory.bin from a corpus and a list of famous texts and idioms (tiankong_build_memory).
//
// 1. Every corpus line is tokenized with the model's tokenizer and split into runs of ordinary
//    tokens (QueryUnits: specials and [UNK] break runs); n-grams of 1..order tokens are counted
//    exactly (sorted 64-bit keys).
// 2. Every n-gram (h, w) of 2..order tokens seen at least min_count times is a candidate entry with
//    value log count(h w) / count(h). Entries are ranked by how much they change the model's
//    estimate (Seymore & Rosenfeld 1996: count(h w) * |log P(w|h) - log(alpha P(w|h'))|, h' = h
//    without its first token) and the best max_ngrams are kept, each with its suffix chain (the
//    reader checks hashed hits against it). Bigrams are stored exactly, longer ones hashed.
// 3. For each token, its most frequent predecessors (candidate proposals).
// 4. The texts go into the exact index (text_index.h), and the readings their dictionary gives
//    where the pinyin table's first reading differs (text_readings.h).
// Same inputs and options -> the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "memory_query.h"
#include "tiankong/tiankong.h"

namespace tiankong {
namespace memory {

struct BuildOptions {
  size_t order = 5;
  uint32_t min_count = 2;
  size_t max_ngrams = 1500000;  // entries kept in the hash table
  double load_factor = 0.8;     // entries / slots
  float alpha = 0.4f;           // stupid backoff
  // Usefulness = count^count_exponent * |log P(w|h) - backoff estimate|. 1 is the classic
  // count-weighted criterion (best perplexity); smaller values keep more long, rarer n-grams
  // (memorised lines) at the expense of frequent short ones.
  double count_exponent = 1.0;
  size_t neighbours = 48;   // predecessors kept per token (successors come from the bigrams)
  std::string description;  // JSON object text merged into the build info (inputs etc.)
};

struct SourceText {
  std::string work, title, author, text;
  bool idiom = false;
  std::string pinyin;  // the dictionary's reading, syllables separated by spaces ("" = none)
};

struct BuildReport {
  uint64_t lines = 0, tokens = 0;
  std::vector<uint64_t> distinct;  // per order (index = order): distinct n-grams
  std::vector<uint64_t> eligible;  // per order: seen >= min_count
  std::vector<uint64_t> kept;      // per order: in the table
  uint64_t slots = 0, texts = 0, idioms = 0, units = 0;
  uint64_t read_idioms = 0;  // texts whose dictionary reading lines up with their tokens
  uint64_t readings = 0;     // units stored with a reading other than their character's first
};

class MemoryBuilder {
 public:
  MemoryBuilder(const Tokenizer& tokenizer, const BuildOptions& options);
  // Adds one corpus line (UTF-8; invalid lines are skipped and counted). `weight` multiplies its
  // counts in the probabilities (oversampling modern text); eligibility (min_count) counts each
  // occurrence once, so a weighted singleton does not pass for a frequent n-gram.
  void AddLine(std::string_view line, uint8_t weight = 1);
  void AddText(const SourceText& text);
  // Counts, prunes and writes the file; *report gets the numbers. Returns an empty vector and sets
  // *error when the options cannot be met (e.g. order out of range, vocab larger than 65535).
  std::vector<uint8_t> Finish(BuildReport* report, std::string* error);

 private:
  const Tokenizer& tokenizer_;
  BuildOptions options_;
  QueryUnits units_;
  std::vector<int32_t> stream_;   // units of all lines, kBoundary between runs
  std::vector<uint8_t> weights_;  // the weight of each stream_ entry's line
  std::vector<SourceText> texts_;
  uint64_t lines_ = 0, invalid_lines_ = 0;
};

// Splits a whole memory.bin (bytes[0, n)) in two, so a first answer can come before the larger
// part has arrived: *base gets every section, its n-gram section replaced by a bigram-only one
// (BigramOnlyNgramSection, same backoff); *ngrams gets the build info and the n-gram section.
// Memory::Load(base, ngrams) then answers exactly as Memory::Load(whole). False with *error when
// the bytes are not a memory that loads, or have no longer n-grams to split off.
bool SplitNgrams(const uint8_t* bytes, size_t n, std::vector<uint8_t>* base, std::vector<uint8_t>* ngrams,
                 std::string* error);

}  // namespace memory
}  // namespace tiankong
