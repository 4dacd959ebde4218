#include "ngram_table.h"

#include <algorithm>
#include <cmath>

namespace tiankong {
namespace memory {

namespace {

// splitmix64's finaliser: every input bit affects every output bit.
inline uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

inline size_t SlotOf(uint64_t key, size_t slots) {
  return static_cast<size_t>(((key >> 32) * static_cast<uint64_t>(slots)) >> 32);
}

// 24 bits of the key not used by SlotOf's high bits; never 0 (0 marks an empty slot).
inline uint32_t FingerprintOf(uint64_t key) {
  const auto fingerprint = static_cast<uint32_t>(key & 0xFFFFFF);
  return fingerprint == 0 ? 1 : fingerprint;
}

constexpr float kStep = -kMinLogProb / 254.0f;

}  // namespace

uint64_t NgramKey(const int32_t* ids, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull * (n + 1);
  for (size_t i = 0; i < n; ++i) h = Mix(h ^ static_cast<uint32_t>(ids[i]));
  return h;
}

uint8_t QuantizeLogProb(float log_p) {
  const float clamped = std::min(0.0f, std::max(kMinLogProb, log_p));
  return static_cast<uint8_t>(1 + std::lround(-clamped / kStep));
}

float DequantizeLogProb(uint8_t code) { return -static_cast<float>(code - 1) * kStep; }

bool NgramTable::Parse(const Section& bigrams, const Section& ngrams, size_t vocab_size, std::string* error) {
  ByteReader b(bigrams.data, bigrams.size);
  vocab_ = b.U32();
  bigram_count_ = b.U32();
  bigram_offsets_ = static_cast<const uint32_t*>(b.Array(vocab_ + 1, 4));
  bigram_next_ = static_cast<const uint16_t*>(b.Array(bigram_count_, 2));
  bigram_values_ = static_cast<const uint8_t*>(b.Array(bigram_count_, 1));
  if (b.failed() || vocab_ != vocab_size || bigram_offsets_[0] != 0 || bigram_offsets_[vocab_] != bigram_count_) {
    *error = "bigram section is malformed";
    return false;
  }
  for (size_t id = 0; id < vocab_; ++id) {
    const uint32_t begin = bigram_offsets_[id], end = bigram_offsets_[id + 1];
    if (begin > end || end > bigram_count_) {  // checked before the loop below reads [begin, end)
      *error = "bigram section is malformed (offsets)";
      return false;
    }
    for (uint32_t k = begin; k < end; ++k) {
      if (bigram_next_[k] >= vocab_ || (k > begin && bigram_next_[k] <= bigram_next_[k - 1]) ||
          bigram_values_[k] == 0) {
        *error = "bigram section is malformed (successor lists)";
        return false;
      }
    }
  }
  ByteReader reader(ngrams.data, ngrams.size);
  max_order_ = reader.U32();
  slots_ = reader.U32();
  entries_ = reader.U32();
  max_probe_ = reader.U32();
  backoff_ = reader.F32();
  slot_ = static_cast<const uint32_t*>(reader.Array(slots_, 4));
  if (reader.failed() || max_order_ < 2 || max_order_ > kMaxOrder || slots_ == 0 || entries_ >= slots_ ||
      max_probe_ > slots_ || !(backoff_ <= 0 && backoff_ >= -100)) {  // bounded: gains stay finite
    *error = "n-gram section is malformed";
    return false;
  }
  const size_t used = static_cast<size_t>(std::count_if(slot_, slot_ + slots_, [](uint32_t s) { return s != 0; }));
  const bool values_ok = std::all_of(slot_, slot_ + slots_, [](uint32_t s) { return s == 0 || (s & 0xFF) != 0; });
  if (used != entries_ || !values_ok) {
    *error = "n-gram section is malformed (slots do not match its header)";
    return false;
  }
  return true;
}

size_t NgramTable::Successors(int32_t id, const uint16_t** next, const uint8_t** values) const {
  if (id < 0 || static_cast<size_t>(id) >= vocab_) return 0;
  const uint32_t begin = bigram_offsets_[id];
  *next = bigram_next_ + begin;
  *values = bigram_values_ + begin;
  return bigram_offsets_[id + 1] - begin;
}

bool NgramTable::FindHashed(const int32_t* ids, size_t n, uint8_t* code) const {
  const uint64_t key = NgramKey(ids, n);
  const uint32_t fingerprint = FingerprintOf(key);
  for (size_t slot = SlotOf(key, slots_), probes = 0; probes < max_probe_; ++probes) {
    const uint32_t stored = slot_[slot];
    if (stored == 0) return false;
    if ((stored >> 8) == fingerprint) {
      *code = static_cast<uint8_t>(stored & 0xFF);
      return true;
    }
    if (++slot == slots_) slot = 0;
  }
  return false;
}

bool NgramTable::Find(const int32_t* ids, size_t n, float* log_p) const {
  if (n < 2 || n > max_order_) return false;
  if (n == 2) {
    const uint16_t* next = nullptr;
    const uint8_t* values = nullptr;
    const size_t count = Successors(ids[0], &next, &values);
    if (ids[1] < 0) return false;
    const uint16_t* it = std::lower_bound(next, next + count, static_cast<uint16_t>(ids[1]));
    if (it == next + count || *it != ids[1]) return false;
    *log_p = DequantizeLogProb(values[it - next]);
    return true;
  }
  uint8_t code;
  float suffix;
  // The suffix chain must be there too (the builder keeps it): rejects fingerprint collisions.
  if (!FindHashed(ids, n, &code) || !Find(ids + 1, n - 1, &suffix)) return false;
  *log_p = DequantizeLogProb(code);
  return true;
}

std::vector<uint8_t> BigramOnlyNgramSection(float backoff) {
  ByteWriter out;
  out.U32(2);  // max_order: bigrams only
  out.U32(1);  // one empty slot (Parse wants entries < slots)
  out.U32(0);  // entries
  out.U32(0);  // max_probe
  out.F32(backoff);
  out.U32(0);  // slot[0]: empty
  return out.Take();
}

std::vector<uint8_t> NgramTableBuilder::FinishBigrams() {
  std::sort(bigrams_.begin(), bigrams_.end(), [](const Bigram& a, const Bigram& b) {
    return a.first < b.first || (a.first == b.first && a.second < b.second);
  });
  std::vector<uint32_t> offsets(vocab_ + 1, 0);
  std::vector<uint16_t> next;
  std::vector<uint8_t> values;
  for (const Bigram& bigram : bigrams_) {
    ++offsets[bigram.first + 1];
    next.push_back(static_cast<uint16_t>(bigram.second));
    values.push_back(bigram.code);
  }
  for (size_t id = 0; id < vocab_; ++id) offsets[id + 1] += offsets[id];
  ByteWriter out;
  out.U32(static_cast<uint32_t>(vocab_));
  out.U32(static_cast<uint32_t>(bigrams_.size()));
  out.Array(offsets);
  out.Array(next);
  out.Array(values);
  return out.Take();
}

std::vector<uint8_t> NgramTableBuilder::FinishHashed(double load_factor, size_t* slots_out) {
  std::sort(longer_.begin(), longer_.end(), [](const Longer& a, const Longer& b) { return a.key < b.key; });
  const size_t slots = std::max(static_cast<size_t>(std::ceil(longer_.size() / load_factor)), longer_.size() + 1);
  std::vector<uint32_t> table(slots, 0);
  size_t max_probe = 0;
  for (const Longer& entry : longer_) {
    size_t slot = SlotOf(entry.key, slots), probes = 1;
    while (table[slot] != 0) {
      if (++slot == slots) slot = 0;
      ++probes;
    }
    max_probe = std::max(max_probe, probes);
    table[slot] = (FingerprintOf(entry.key) << 8) | entry.code;
  }
  *slots_out = slots;
  ByteWriter out;
  out.U32(static_cast<uint32_t>(max_order_));
  out.U32(static_cast<uint32_t>(slots));
  out.U32(static_cast<uint32_t>(longer_.size()));
  out.U32(static_cast<uint32_t>(max_probe));
  out.F32(backoff_);
  out.Array(table);
  return out.Take();
}

}  // namespace memory
}  // namespace tiankong
