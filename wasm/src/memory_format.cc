#include "memory_format.h"

#include <array>
#include <cstring>

namespace tiankong {
namespace memory {

namespace {

std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

uint32_t Crc32(const uint8_t* data, size_t n, uint32_t crc) {
  static const std::array<uint32_t, 256> table = MakeCrcTable();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

uint64_t VocabFingerprint(const Tokenizer& tokenizer) {
  uint64_t hash = 0xcbf29ce484222325ull;
  const auto mix = [&hash](unsigned char byte) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  };
  for (int32_t id = 0; id < tokenizer.VocabSize(); ++id) {
    for (const char c : tokenizer.IdToToken(id)) mix(static_cast<unsigned char>(c));
    mix('\n');
  }
  return hash;
}

const Section* Container::Find(uint32_t id) const {
  for (const Section& section : sections) {
    if (section.id == id) return &section;
  }
  return nullptr;
}

MemoryStatus ParseContainer(const uint8_t* bytes, size_t n, Container* out, std::string* error) {
  *out = Container();
  if (n < kHeaderBytes) {
    *error =
        "file is " + std::to_string(n) + " bytes, shorter than the " + std::to_string(kHeaderBytes) + "-byte header";
    return n >= sizeof kMagic && std::memcmp(bytes, kMagic, sizeof kMagic) != 0 ? MemoryStatus::kBadMagic
                                                                                : MemoryStatus::kTruncated;
  }
  if (std::memcmp(bytes, kMagic, sizeof kMagic) != 0) {
    *error = "not a tiankong memory file (no TKMEMORY magic)";
    return MemoryStatus::kBadMagic;
  }
  const uint32_t version = Load<uint32_t>(bytes + 8);
  if (version != kVersion) {
    *error = "format version " + std::to_string(version) + ", this build reads version " + std::to_string(kVersion) +
             " (rebuild it with scripts/build-memory)";
    return MemoryStatus::kBadVersion;
  }
  const uint32_t count = Load<uint32_t>(bytes + 12);
  const uint64_t file_size = Load<uint64_t>(bytes + 16);
  if (file_size != n) {
    *error = "header says " + std::to_string(file_size) + " bytes, the file has " + std::to_string(n);
    return file_size > n ? MemoryStatus::kTruncated : MemoryStatus::kCorrupt;
  }
  if (count > 64 || kHeaderBytes + size_t{count} * kSectionEntryBytes > n) {
    *error = "section table (" + std::to_string(count) + " sections) does not fit in the file";
    return MemoryStatus::kCorrupt;
  }
  const size_t table_end = kHeaderBytes + size_t{count} * kSectionEntryBytes;
  uint32_t crc = Crc32(bytes, 36);
  crc = Crc32(bytes + kHeaderBytes, table_end - kHeaderBytes, crc);
  if (crc != Load<uint32_t>(bytes + 36)) {
    *error = "header checksum mismatch";
    return MemoryStatus::kCorrupt;
  }
  out->version = version;
  out->vocab_fingerprint = Load<uint64_t>(bytes + 24);
  out->vocab_size = Load<uint32_t>(bytes + 32);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* entry = bytes + kHeaderBytes + size_t{i} * kSectionEntryBytes;
    Section section;
    section.id = Load<uint32_t>(entry);
    const uint32_t section_crc = Load<uint32_t>(entry + 4);
    const uint64_t offset = Load<uint64_t>(entry + 8);
    const uint64_t size = Load<uint64_t>(entry + 16);
    if (offset < table_end || offset % 8 != 0 || offset > n || size > n - offset) {
      *error = "section " + std::to_string(section.id) + " lies outside the file";
      return MemoryStatus::kCorrupt;
    }
    section.data = bytes + offset;
    section.size = static_cast<size_t>(size);
    if (Crc32(section.data, section.size) != section_crc) {
      *error = "section " + std::to_string(section.id) + " checksum mismatch";
      return MemoryStatus::kCorrupt;
    }
    out->sections.push_back(section);
  }
  return MemoryStatus::kOk;
}

std::vector<uint8_t> ContainerWriter::Finish() const {
  const size_t table_end = kHeaderBytes + sections_.size() * kSectionEntryBytes;
  std::vector<size_t> offsets;
  size_t end = (table_end + 7) / 8 * 8;
  for (const Pending& section : sections_) {
    offsets.push_back(end);
    end = (end + section.data.size() + 7) / 8 * 8;
  }
  std::vector<uint8_t> out(end, 0);
  const auto put = [&out](size_t at, const void* v, size_t n) { std::memcpy(out.data() + at, v, n); };
  put(0, kMagic, sizeof kMagic);
  const uint32_t version = kVersion, count = static_cast<uint32_t>(sections_.size());
  const uint64_t size = end;
  put(8, &version, 4);
  put(12, &count, 4);
  put(16, &size, 8);
  put(24, &fingerprint_, 8);
  put(32, &vocab_size_, 4);
  for (size_t i = 0; i < sections_.size(); ++i) {
    const Pending& section = sections_[i];
    const uint8_t* entry_at = out.data() + kHeaderBytes + i * kSectionEntryBytes;
    const uint32_t crc = Crc32(section.data.data(), section.data.size());
    const uint64_t offset = offsets[i], bytes = section.data.size();
    put(entry_at - out.data(), &section.id, 4);
    put(entry_at - out.data() + 4, &crc, 4);
    put(entry_at - out.data() + 8, &offset, 8);
    put(entry_at - out.data() + 16, &bytes, 8);
    if (!section.data.empty()) put(offsets[i], section.data.data(), section.data.size());
  }
  uint32_t crc = Crc32(out.data(), 36);
  crc = Crc32(out.data() + kHeaderBytes, table_end - kHeaderBytes, crc);
  put(36, &crc, 4);
  return out;
}

void ByteWriter::Raw(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  bytes_.insert(bytes_.end(), p, p + n);
}

void ByteWriter::Align(size_t alignment) {
  while (bytes_.size() % alignment) bytes_.push_back(0);
}

uint32_t ByteReader::U32() {
  const void* p = Array(1, 4);
  return p ? Load<uint32_t>(static_cast<const uint8_t*>(p)) : 0;
}

uint64_t ByteReader::U64() {
  const void* p = Array(1, 8);
  return p ? Load<uint64_t>(static_cast<const uint8_t*>(p)) : 0;
}

float ByteReader::F32() {
  const void* p = Array(1, 4);
  return p ? Load<float>(static_cast<const uint8_t*>(p)) : 0.0f;
}

const void* ByteReader::Array(size_t count, size_t size) {
  if (failed_) return nullptr;
  const size_t start = size > 1 ? (pos_ + size - 1) / size * size : pos_;  // size 0: no alignment
  if (start > n_ || (size != 0 && count > (n_ - start) / size)) {
    failed_ = true;
    return nullptr;
  }
  pos_ = start + count * size;
  return data_ + start;
}

}  // namespace memory
}  // namespace tiankong
