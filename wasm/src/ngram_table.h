// The memory's n-gram table: for each kept n-gram (h, w) of 2..max_order tokens, the conditional
// log-probability log P(w | h) = log count(h w) / count(h), quantised to one byte, in an
// open-addressing hash table with 16-bit fingerprints (3 bytes per slot, no keys stored).
//
// Section layout (memory_format.h conventions):
//   u32 max_order, u32 slot_count, u32 entries, u32 max_probe (longest probe run of any entry),
//   f32 backoff (log alpha of stupid backoff),
//   u16 fingerprint[slot_count]  (0 = empty slot)
//   u8  value[slot_count]        (QuantizeLogProb)
// A slot is found from the key's high 32 bits (multiply-shift onto slot_count), then linear
// probing; a lookup stops at an empty slot or after max_probe slots (so even a hostile file
// cannot make lookups scan the table). A false hit needs a 16-bit fingerprint collision
// inside one probe run: about probes/65536 per absent n-gram.
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

// Read-only view of the section (the bytes stay owned by the caller).
class NgramTable {
 public:
  // Checks the section's sizes; false with *error on a malformed section.
  bool Parse(const Section& section, std::string* error);
  // True and *log_p = log P(ids[n-1] | ids[0..n-1)) when the n-gram (2 <= n <= max_order) is kept.
  bool Find(const int32_t* ids, size_t n, float* log_p) const;
  size_t max_order() const { return max_order_; }
  float backoff() const { return backoff_; }
  size_t slots() const { return slots_; }
  size_t entries() const { return entries_; }

 private:
  size_t max_order_ = 0;
  size_t slots_ = 0;
  size_t entries_ = 0;
  size_t max_probe_ = 0;
  float backoff_ = 0.0f;
  const uint16_t* fingerprints_ = nullptr;
  const uint8_t* values_ = nullptr;
};

// Fills a table of `slot_count` slots. Insert in a fixed order (e.g. sorted by key) to get the
// same bytes for the same input.
class NgramTableBuilder {
 public:
  explicit NgramTableBuilder(size_t slot_count);
  // Adds an entry (keys must be distinct); false when the table is full (one slot stays free).
  bool Insert(uint64_t key, float log_p);
  std::vector<uint8_t> Finish(size_t max_order, float backoff) const;

 private:
  std::vector<uint16_t> fingerprints_;
  std::vector<uint8_t> values_;
  size_t entries_ = 0;
  size_t max_probe_ = 0;
};

}  // namespace memory
}  // namespace tiankong
