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

inline uint16_t FingerprintOf(uint64_t key) {
  const auto fingerprint = static_cast<uint16_t>(key);
  return fingerprint == 0 ? 1 : fingerprint;  // 0 marks an empty slot
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

bool NgramTable::Parse(const Section& section, std::string* error) {
  ByteReader reader(section.data, section.size);
  max_order_ = reader.U32();
  slots_ = reader.U32();
  entries_ = reader.U32();
  max_probe_ = reader.U32();
  backoff_ = reader.F32();
  fingerprints_ = static_cast<const uint16_t*>(reader.Array(slots_, 2));
  values_ = static_cast<const uint8_t*>(reader.Array(slots_, 1));
  if (reader.failed() || max_order_ < 2 || max_order_ > kMaxOrder || slots_ == 0 ||
      entries_ >= slots_ || max_probe_ > slots_ || !std::isfinite(backoff_) || backoff_ > 0) {
    *error = "n-gram section is malformed";
    return false;
  }
  const size_t used = static_cast<size_t>(
      std::count_if(fingerprints_, fingerprints_ + slots_, [](uint16_t f) { return f != 0; }));
  if (used != entries_) {
    *error = "n-gram section is malformed (slot count does not match its header)";
    return false;
  }
  return true;
}

bool NgramTable::Find(const int32_t* ids, size_t n, float* log_p) const {
  if (n < 2 || n > max_order_) return false;
  const uint64_t key = NgramKey(ids, n);
  const uint16_t fingerprint = FingerprintOf(key);
  for (size_t slot = SlotOf(key, slots_), probes = 0; probes < max_probe_; ++probes) {
    const uint16_t stored = fingerprints_[slot];
    if (stored == 0) return false;
    if (stored == fingerprint) {
      *log_p = DequantizeLogProb(values_[slot]);
      return true;
    }
    if (++slot == slots_) slot = 0;
  }
  return false;
}

NgramTableBuilder::NgramTableBuilder(size_t slot_count)
    : fingerprints_(std::max<size_t>(slot_count, 1), 0), values_(std::max<size_t>(slot_count, 1), 0) {}

bool NgramTableBuilder::Insert(uint64_t key, float log_p) {
  const size_t slots = fingerprints_.size();
  if (entries_ + 1 >= slots) return false;
  const uint16_t fingerprint = FingerprintOf(key);
  size_t slot = SlotOf(key, slots), probes = 1;
  while (fingerprints_[slot] != 0) {
    if (++slot == slots) slot = 0;
    ++probes;
  }
  max_probe_ = std::max(max_probe_, probes);
  fingerprints_[slot] = fingerprint;
  values_[slot] = QuantizeLogProb(log_p);
  ++entries_;
  return true;
}

std::vector<uint8_t> NgramTableBuilder::Finish(size_t max_order, float backoff) const {
  ByteWriter out;
  out.U32(static_cast<uint32_t>(max_order));
  out.U32(static_cast<uint32_t>(fingerprints_.size()));
  out.U32(static_cast<uint32_t>(entries_));
  out.U32(static_cast<uint32_t>(max_probe_));
  out.F32(backoff);
  out.Array(fingerprints_);
  out.Array(values_);
  return out.Take();
}

}  // namespace memory
}  // namespace tiankong
