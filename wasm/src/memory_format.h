// memory.bin container: a versioned header, a table of typed sections, a CRC-32 per section
// and one over the header (docs/memory-format.md is the byte-level description).
//
//   offset 0   char[8]  magic "TKMEMORY"
//          8   u32      format version (kVersion)
//         12   u32      section count N
//         16   u64      file size in bytes
//         24   u64      vocab fingerprint (VocabFingerprint of the tokenizer it was built for)
//         32   u32      vocab size
//         36   u32      CRC-32 of bytes [0, 36) followed by the section table
//         40   N x 24   section table: u32 id, u32 crc32, u64 offset, u64 size
//   sections, each at an 8-byte aligned offset, in table order
//
// All integers little-endian. Readers reject unknown versions and any CRC mismatch; they ignore
// unknown section ids (so later versions can add sections).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tiankong/tiankong.h"

namespace tiankong {
namespace memory {

constexpr char kMagic[8] = {'T', 'K', 'M', 'E', 'M', 'O', 'R', 'Y'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 40;
constexpr size_t kSectionEntryBytes = 24;

enum SectionId : uint32_t {
  kSectionBuildInfo = 1,     // UTF-8 JSON: inputs, cut-offs, counts (informational)
  kSectionUnigram = 2,       // f32 log P(token) per vocab id
  kSectionNgrams = 3,        // hashed n-grams of 3..order tokens (ngram_table.h)
  kSectionPredecessors = 4,  // most frequent predecessors per token (candidate proposals)
  kSectionTexts = 5,         // famous texts and idioms (text_index.h)
  kSectionBigrams = 6,       // exact bigrams: successor lists per token (ngram_table.h)
  kSectionTextReadings = 7,  // the idiom dictionary's readings of idiom characters (text_readings.h)
};

// CRC-32 (IEEE 802.3, reflected, as zlib's crc32). `crc` continues a previous call (start at 0).
uint32_t Crc32(const uint8_t* data, size_t n, uint32_t crc = 0);

// FNV-1a 64 over every token followed by '\n', in id order: the bytes of a standard vocab.txt.
uint64_t VocabFingerprint(const Tokenizer& tokenizer);

struct Section {
  uint32_t id = 0;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

struct Container {
  uint32_t version = 0;
  uint64_t vocab_fingerprint = 0;
  uint32_t vocab_size = 0;
  std::vector<Section> sections;
  // The section with this id, or nullptr.
  const Section* Find(uint32_t id) const;
};

// Parses and verifies the container in bytes[0, n): magic, version, sizes, header and section
// CRCs, section bounds. On failure returns the status and a message in *error.
MemoryStatus ParseContainer(const uint8_t* bytes, size_t n, Container* out, std::string* error);

// Assembles a container: sections in the order added, 8-byte aligned, CRCs filled in.
class ContainerWriter {
 public:
  ContainerWriter(uint64_t vocab_fingerprint, uint32_t vocab_size)
      : fingerprint_(vocab_fingerprint), vocab_size_(vocab_size) {}
  void Add(uint32_t id, std::vector<uint8_t> data) { sections_.push_back({id, std::move(data)}); }
  std::vector<uint8_t> Finish() const;

 private:
  struct Pending {
    uint32_t id;
    std::vector<uint8_t> data;
  };
  uint64_t fingerprint_;
  uint32_t vocab_size_;
  std::vector<Pending> sections_;
};

// Little-endian helpers for section payloads. Every value and array starts at a multiple of its
// element size (ByteReader skips the same padding), so readers can use the bytes in place.
class ByteWriter {
 public:
  void U32(uint32_t v) { Array(&v, 1); }
  void U64(uint64_t v) { Array(&v, 1); }
  void F32(float v) { Array(&v, 1); }
  template <typename T>
  void Array(const T* data, size_t count) {
    Align(sizeof(T));
    Raw(data, count * sizeof(T));
  }
  template <typename T>
  void Array(const std::vector<T>& values) {
    Array(values.data(), values.size());
  }
  void Raw(const void* data, size_t n);
  void Align(size_t alignment);
  size_t size() const { return bytes_.size(); }
  std::vector<uint8_t> Take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

// Bounds-checked reader over a section: every read past the end sets failed() and returns 0,
// so a malformed section can never read outside its bytes.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t n) : data_(data), n_(n) {}
  uint32_t U32();
  uint64_t U64();
  float F32();
  // A pointer to `count` elements of `size` bytes at the current position (aligned to `size`),
  // or nullptr (and failed()) when they do not fit.
  const void* Array(size_t count, size_t size);
  bool failed() const { return failed_; }
  size_t position() const { return pos_; }

 private:
  const uint8_t* data_;
  size_t n_;
  size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace memory
}  // namespace tiankong
