// The memory's n-gram statistics: for each kept n-gram (h, w), the conditional log-probability
// log P(w | h) = log count(h w) / count(h), quantised to one byte.
//
// Bigrams are stored exactly, as sorted successor lists per token (section kSectionBigrams):
//   u32 vocab, u32 entries, u32 offset[vocab + 1], u16 next[entries], u8 value[entries]
// so the successors of a token can be enumerated (candidate proposals) and a bigram is never
// mistaken for another.
//
// Longer n-grams (3..max_order) are in an open-addressing hash table (section kSectionNgrams):
//   u32 max_order, u32 slot_count, u32 entries, u32 max_probe (longest probe run of any entry),
//   f32 backoff (log alpha of stupid backoff),
//   u32 slot[slot_count]   high 24 bits: fingerprint (0 = empty slot), low 8 bits: value
// A slot is found from the key's high 32 bits (multiply-shift onto slot_count), then linear
// probing; a lookup stops at an empty slot or after max_probe slots (a hostile file cannot make
// it scan the table). A false hit needs a 24-bit fingerprint collision within one probe run, and
// it is then rejected unless the n-gram's suffix chain (w's shorter histories, down to the exact
// bigram) is present too: the builder keeps every kept n-gram's suffixes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memory_format.h"

namespace tiankong {
namespace memory {

constexpr size_t kMaxOrder = 8;
// Quantisation range of log-probabilities: [kMinLogProb, 0] in 254 steps (about 0.08 nats).
constexpr float kMinLogProb = -20.0f;

// 64-bit key of the n-gram ids[0..n), 1 <= n <= kMaxOrder. Builder and reader use only this.
uint64_t NgramKey(const int32_t* ids, size_t n);

// log p (clamped to [kMinLogProb, 0]) -> code 1..255; DequantizeLogProb inverts it to the centre
// of the step.
uint8_t QuantizeLogProb(float log_p);
float DequantizeLogProb(uint8_t code);

// Read-only view of the two sections (the bytes stay owned by the caller).
class NgramTable {
 public:
  // Checks the sections' sizes and contents against `vocab_size`; false with *error if malformed.
  bool Parse(const Section& bigrams, const Section& ngrams, size_t vocab_size, std::string* error);
  // True and *log_p = log P(ids[n-1] | ids[0..n-1)) when the n-gram (2 <= n <= max_order) is kept.
  bool Find(const int32_t* ids, size_t n, float* log_p) const;
  // The kept successors of `id` and their values (log P(next | id) codes), in id order.
  size_t Successors(int32_t id, const uint16_t** next, const uint8_t** values) const;
  size_t max_order() const { return max_order_; }
  float backoff() const { return backoff_; }
  size_t slots() const { return slots_; }
  size_t entries() const { return entries_ + bigram_count_; }

 private:
  bool FindHashed(const int32_t* ids, size_t n, uint8_t* code) const;

  size_t vocab_ = 0;
  size_t bigram_count_ = 0;
  const uint32_t* bigram_offsets_ = nullptr;
  const uint16_t* bigram_next_ = nullptr;
  const uint8_t* bigram_values_ = nullptr;
  size_t max_order_ = 0;
  size_t slots_ = 0;
  size_t entries_ = 0;
  size_t max_probe_ = 0;
  float backoff_ = 0.0f;
  const uint32_t* slot_ = nullptr;
};

// An n-gram section of order 2 with no hashed entries and this backoff: what a split memory's
// base (SplitNgrams) holds in place of the longer n-grams, so it reads as a bigram memory.
std::vector<uint8_t> BigramOnlyNgramSection(float backoff);

// Builds both sections. Add every entry once; Finish orders them, so the bytes depend only on the
// set of entries.
class NgramTableBuilder {
 public:
  NgramTableBuilder(size_t vocab_size, size_t max_order, float backoff)
      : vocab_(vocab_size), max_order_(max_order), backoff_(backoff) {}
  void AddBigram(int32_t first, int32_t second, float log_p) {
    bigrams_.push_back({first, second, QuantizeLogProb(log_p)});
  }
  void AddLonger(uint64_t key, float log_p) { longer_.push_back({key, QuantizeLogProb(log_p)}); }
  // The bigram section and the hash section with slot_count = entries / load_factor.
  std::vector<uint8_t> FinishBigrams();
  std::vector<uint8_t> FinishHashed(double load_factor, size_t* slots);

 private:
  struct Bigram {
    int32_t first, second;
    uint8_t code;
  };
  struct Longer {
    uint64_t key;
    uint8_t code;
  };
  size_t vocab_, max_order_;
  float backoff_;
  std::vector<Bigram> bigrams_;
  std::vector<Longer> longer_;
};

}  // namespace memory
}  // namespace tiankong
