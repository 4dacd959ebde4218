#include "memory_format.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace tiankong {
namespace memory {
namespace {

std::vector<uint8_t> Bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

uint32_t Crc(const std::string& s) { return Crc32(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

template <typename T>
T Get(const std::vector<uint8_t>& bytes, size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

template <typename T>
void Put(std::vector<uint8_t>* bytes, size_t at, T v) {
  std::memcpy(bytes->data() + at, &v, sizeof v);
}

// Recomputes the header CRC (bytes [0, 36) + the section table), so a test can change a header
// field and see the check that field is meant to trip rather than the checksum.
void ResealHeader(std::vector<uint8_t>* file) {
  const uint32_t count = Get<uint32_t>(*file, 12);
  const size_t table_end = kHeaderBytes + size_t{count} * kSectionEntryBytes;
  uint32_t crc = Crc32(file->data(), 36);
  crc = Crc32(file->data() + kHeaderBytes, table_end - kHeaderBytes, crc);
  Put<uint32_t>(file, 36, crc);
}

MemoryStatus Parse(const std::vector<uint8_t>& file, Container* out = nullptr) {
  Container container;
  std::string error;
  const MemoryStatus status = ParseContainer(file.data(), file.size(), out ? out : &container, &error);
  if (status != MemoryStatus::kOk) {
    EXPECT_FALSE(error.empty()) << "every failure explains itself";
  }
  return status;
}

// Sections of awkward sizes: empty, 1 byte, 7 bytes (padding follows), exactly 8, 13.
std::vector<uint8_t> SmallContainer() {
  ContainerWriter writer(0x0123456789abcdefull, 21128);
  writer.Add(kSectionBuildInfo, Bytes("{\"a\":1}"));
  writer.Add(kSectionUnigram, {});
  writer.Add(kSectionNgrams, {0x42});
  writer.Add(kSectionTexts, Bytes("12345678"));
  writer.Add(99, Bytes("unknown id 99"));  // readers skip ids they do not know
  return writer.Finish();
}

TEST(Crc32, MatchesZlib) {
  // Reference values: Python's zlib.crc32.
  EXPECT_EQ(Crc(""), 0x00000000u);
  EXPECT_EQ(Crc("a"), 0xE8B7BE43u);
  EXPECT_EQ(Crc("abc"), 0x352441C2u);
  EXPECT_EQ(Crc("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
  EXPECT_EQ(Crc(std::string(4, '\0')), 0x2144DF1Cu);
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  EXPECT_EQ(Crc(all), 0x29058C73u);
}

TEST(Crc32, ContinuesAcrossSplits) {
  const std::string text = "The quick brown fox jumps over the lazy dog";
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  for (size_t split = 0; split <= text.size(); ++split) {
    EXPECT_EQ(Crc32(p + split, text.size() - split, Crc32(p, split)), 0x414FA339u) << split;
  }
}

TEST(VocabFingerprint, IsFnv1a64OfTheVocabTxtBytes) {
  // Reference: FNV-1a 64 of "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n天\n##a\nb\n", computed in Python.
  std::string error;
  auto tokenizer = Tokenizer::FromVocab("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n天\n##a\nb", {}, &error);
  ASSERT_NE(tokenizer, nullptr) << error;
  EXPECT_EQ(VocabFingerprint(*tokenizer), 0xd98b5eb2de49cabdull);
  // Any change of a token or of the order changes it.
  auto swapped = Tokenizer::FromVocab("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n天\nb\n##a", {}, &error);
  ASSERT_NE(swapped, nullptr) << error;
  EXPECT_NE(VocabFingerprint(*swapped), VocabFingerprint(*tokenizer));
}

TEST(Container, RoundTripsHeaderAndSections) {
  const std::vector<uint8_t> file = SmallContainer();
  EXPECT_EQ(file.size() % 8, 0u);
  EXPECT_EQ(std::memcmp(file.data(), "TKMEMORY", 8), 0);
  Container container;
  ASSERT_EQ(Parse(file, &container), MemoryStatus::kOk);
  EXPECT_EQ(container.version, kVersion);
  EXPECT_EQ(container.vocab_fingerprint, 0x0123456789abcdefull);
  EXPECT_EQ(container.vocab_size, 21128u);
  const std::vector<std::pair<uint32_t, std::string>> expected = {{kSectionBuildInfo, "{\"a\":1}"},
                                                                  {kSectionUnigram, ""},
                                                                  {kSectionNgrams, "\x42"},
                                                                  {kSectionTexts, "12345678"},
                                                                  {99, "unknown id 99"}};
  ASSERT_EQ(container.sections.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const Section& section = container.sections[i];
    EXPECT_EQ(section.id, expected[i].first);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(section.data), section.size), expected[i].second);
    // Sections start 8-byte aligned after the table, so payloads can be read in place.
    const size_t offset = static_cast<size_t>(section.data - file.data());
    EXPECT_EQ(offset % 8, 0u) << i;
    EXPECT_GE(offset, kHeaderBytes + expected.size() * kSectionEntryBytes) << i;
  }
  EXPECT_EQ(container.Find(kSectionNgrams), &container.sections[2]);
  EXPECT_EQ(container.Find(kSectionPredecessors), nullptr);
}

TEST(Container, ZeroSectionsIsValid) {
  const std::vector<uint8_t> file = ContainerWriter(7, 3).Finish();
  EXPECT_EQ(file.size(), kHeaderBytes);
  Container container;
  ASSERT_EQ(Parse(file, &container), MemoryStatus::kOk);
  EXPECT_TRUE(container.sections.empty());
  EXPECT_EQ(container.vocab_fingerprint, 7u);
  EXPECT_EQ(container.vocab_size, 3u);
}

TEST(Container, FirstSectionWithAnIdWins) {
  ContainerWriter writer(1, 1);
  writer.Add(5, Bytes("first"));
  writer.Add(5, Bytes("second"));
  const std::vector<uint8_t> file = writer.Finish();
  Container container;
  ASSERT_EQ(Parse(file, &container), MemoryStatus::kOk);
  ASSERT_NE(container.Find(5), nullptr);
  EXPECT_EQ(container.Find(5)->size, 5u);
}

// The bytes that carry no information: the zero padding after sections whose size is not a
// multiple of 8. No checksum covers them (by design: the CRCs cover header, table and payloads).
std::vector<bool> PaddingBytes(const std::vector<uint8_t>& file) {
  std::vector<bool> padding(file.size(), false);
  const uint32_t count = Get<uint32_t>(file, 12);
  size_t covered_end = kHeaderBytes + size_t{count} * kSectionEntryBytes;
  for (size_t i = covered_end; i < file.size(); ++i) padding[i] = true;
  for (uint32_t s = 0; s < count; ++s) {
    const size_t entry = kHeaderBytes + s * kSectionEntryBytes;
    const auto offset = Get<uint64_t>(file, entry + 8), size = Get<uint64_t>(file, entry + 16);
    for (uint64_t i = offset; i < offset + size; ++i) padding[i] = false;
  }
  return padding;
}

TEST(Container, EverySingleByteCorruptionIsDetected) {
  const std::vector<uint8_t> original = SmallContainer();
  Container reference;
  ASSERT_EQ(Parse(original, &reference), MemoryStatus::kOk);
  const std::vector<bool> padding = PaddingBytes(original);
  size_t padding_count = 0;
  for (bool p : padding) padding_count += p;
  // 1 + 7 + 3 bytes of padding after the 7-, 1- and 13-byte sections (the 0- and 8-byte ones
  // need none): the padding branch below must not swallow the whole test.
  EXPECT_EQ(padding_count, 1u + 7u + 3u);

  for (size_t at = 0; at < original.size(); ++at) {
    for (const uint8_t flip : {0x01, 0x10, 0x80, 0xFF}) {
      std::vector<uint8_t> file = original;
      file[at] ^= flip;
      Container container;
      const MemoryStatus status = Parse(file, &container);
      SCOPED_TRACE("byte " + std::to_string(at) + " ^ " + std::to_string(flip));
      if (padding[at]) {
        // Undetected, but harmless: every section reads exactly as before.
        ASSERT_EQ(status, MemoryStatus::kOk);
        ASSERT_EQ(container.sections.size(), reference.sections.size());
        for (size_t s = 0; s < reference.sections.size(); ++s) {
          EXPECT_EQ(container.sections[s].id, reference.sections[s].id);
          ASSERT_EQ(container.sections[s].size, reference.sections[s].size);
          EXPECT_EQ(std::memcmp(container.sections[s].data, reference.sections[s].data, reference.sections[s].size), 0);
        }
        continue;
      }
      if (at < 8) {
        EXPECT_EQ(status, MemoryStatus::kBadMagic);
      } else if (at < 12) {
        EXPECT_EQ(status, MemoryStatus::kBadVersion);
      } else if (at >= 16 && at < 24) {
        // The file-size field: larger than the file reads as truncation, smaller as corruption.
        EXPECT_EQ(status, Get<uint64_t>(file, 16) > file.size() ? MemoryStatus::kTruncated : MemoryStatus::kCorrupt);
      } else {
        EXPECT_EQ(status, MemoryStatus::kCorrupt);
      }
    }
  }
}

TEST(Container, TruncationAtEveryLengthIsDetected) {
  const std::vector<uint8_t> original = SmallContainer();
  for (size_t n = 0; n < original.size(); ++n) {
    const std::vector<uint8_t> file(original.begin(), original.begin() + static_cast<std::ptrdiff_t>(n));
    Container container;
    std::string error;
    EXPECT_EQ(ParseContainer(file.data(), file.size(), &container, &error), MemoryStatus::kTruncated) << n;
    EXPECT_TRUE(container.sections.empty()) << n;
  }
}

TEST(Container, TrailingBytesAreCorruption) {
  std::vector<uint8_t> file = SmallContainer();
  file.push_back(0);
  EXPECT_EQ(Parse(file), MemoryStatus::kCorrupt);
}

TEST(Container, OtherVersionsAreRejectedEvenWithAValidChecksum) {
  for (const uint32_t version : {0u, kVersion + 1, 0xFFFFFFFFu}) {
    std::vector<uint8_t> file = SmallContainer();
    Put<uint32_t>(&file, 8, version);
    ResealHeader(&file);
    EXPECT_EQ(Parse(file), MemoryStatus::kBadVersion) << version;
  }
}

TEST(Container, BadMagicOnShortAndFullFiles) {
  EXPECT_EQ(Parse(Bytes("NOTAMEMORYFILE")), MemoryStatus::kBadMagic);
  EXPECT_EQ(Parse(Bytes("TKMEMORY")), MemoryStatus::kTruncated) << "the right magic, then nothing";
  EXPECT_EQ(Parse(Bytes("TKMEM")), MemoryStatus::kTruncated) << "too short to tell";
  std::vector<uint8_t> file = SmallContainer();
  file[7] = 'y';
  ResealHeader(&file);
  EXPECT_EQ(Parse(file), MemoryStatus::kBadMagic);
}

TEST(Container, SectionBoundsAreCheckedEvenWithAValidChecksum) {
  const std::vector<uint8_t> original = SmallContainer();
  const size_t entry = kHeaderBytes + 3 * kSectionEntryBytes;  // the 8-byte texts section
  const auto offset = Get<uint64_t>(original, entry + 8);
  struct Case {
    const char* what;
    uint64_t offset, size;
  };
  const Case cases[] = {
      {"misaligned offset", offset + 1, 7},
      {"offset inside the section table", 8, 8},
      {"offset past the end", original.size() + 8, 0},
      {"size past the end", offset, original.size() - offset + 1},
      {"size that wraps", offset, std::numeric_limits<uint64_t>::max() - 3},
      {"offset that wraps", std::numeric_limits<uint64_t>::max() - 7, 16},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> file = original;
    Put<uint64_t>(&file, entry + 8, c.offset);
    Put<uint64_t>(&file, entry + 16, c.size);
    ResealHeader(&file);
    EXPECT_EQ(Parse(file), MemoryStatus::kCorrupt) << c.what;
  }
  // A section may legally be re-pointed at other bytes: then its own CRC must match them.
  std::vector<uint8_t> file = original;
  Put<uint64_t>(&file, entry + 16, 7);
  ResealHeader(&file);
  EXPECT_EQ(Parse(file), MemoryStatus::kCorrupt) << "section CRC no longer matches";
  Put<uint32_t>(&file, entry + 4, Crc32(file.data() + offset, 7));
  ResealHeader(&file);
  EXPECT_EQ(Parse(file), MemoryStatus::kOk);
}

TEST(Container, SectionCountIsBounded) {
  // At most 64 sections, checked before the table is read (a valid 65-section file is refused).
  for (const size_t count : {64u, 65u}) {
    ContainerWriter writer(1, 1);
    for (size_t i = 0; i < count; ++i) writer.Add(static_cast<uint32_t>(100 + i), {});
    EXPECT_EQ(Parse(writer.Finish()), count <= 64 ? MemoryStatus::kOk : MemoryStatus::kCorrupt) << count;
  }
  // A count whose table does not fit in the file.
  for (const uint32_t count : {6u, 0xFFFFFFFFu}) {
    std::vector<uint8_t> file = ContainerWriter(1, 1).Finish();
    file.resize(file.size() + 5 * kSectionEntryBytes);  // room for 5 entries, not 6
    Put<uint64_t>(&file, 16, file.size());
    Put<uint32_t>(&file, 12, count);
    EXPECT_EQ(Parse(file), MemoryStatus::kCorrupt) << count;
  }
}

TEST(ByteWriter, AlignsEachValueToItsSize) {
  ByteWriter writer;
  writer.Raw("x", 1);
  writer.U32(0x11223344);
  writer.Raw("y", 1);
  writer.U64(0x0102030405060708ull);
  writer.F32(1.5f);
  const std::vector<uint16_t> shorts = {1, 2, 3};
  writer.Array(shorts);
  EXPECT_EQ(writer.size(), 34u);
  const std::vector<uint8_t> bytes = writer.Take();
  ASSERT_EQ(bytes.size(), 34u);
  EXPECT_EQ(bytes[0], 'x');
  EXPECT_EQ(bytes[1] | bytes[2] | bytes[3], 0) << "zero padding";
  EXPECT_EQ(Get<uint32_t>(bytes, 4), 0x11223344u);
  EXPECT_EQ(bytes[8], 'y');
  EXPECT_EQ(Get<uint64_t>(bytes, 16), 0x0102030405060708ull);
  EXPECT_EQ(Get<float>(bytes, 24), 1.5f);
  EXPECT_EQ(Get<uint16_t>(bytes, 28), 1);
  EXPECT_EQ(Get<uint16_t>(bytes, 30), 2);
  EXPECT_EQ(Get<uint16_t>(bytes, 32), 3);
}

TEST(ByteReader, ReadsWhatTheWriterWrote) {
  ByteWriter writer;
  writer.U32(7);
  writer.Raw("z", 1);
  writer.U64(1ull << 40);
  writer.F32(-2.25f);
  const std::vector<uint32_t> words = {10, 20, 30};
  writer.Array(words);
  const std::vector<uint8_t> bytes = writer.Take();
  ByteReader reader(bytes.data(), bytes.size());
  EXPECT_EQ(reader.U32(), 7u);
  const auto* z = static_cast<const uint8_t*>(reader.Array(1, 1));
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(*z, 'z');
  EXPECT_EQ(reader.U64(), 1ull << 40);
  EXPECT_EQ(reader.F32(), -2.25f);
  const auto* array = static_cast<const uint32_t*>(reader.Array(3, 4));
  ASSERT_NE(array, nullptr);
  EXPECT_EQ(array[2], 30u);
  EXPECT_FALSE(reader.failed());
  EXPECT_EQ(reader.position(), bytes.size());
  EXPECT_NE(reader.Array(0, 4), nullptr) << "an empty array at the very end fits";
  EXPECT_FALSE(reader.failed());
}

TEST(ByteReader, NeverReadsPastTheEnd) {
  // Every prefix of a record: each read either fits or fails, and a failure sticks.
  ByteWriter writer;
  writer.U32(1);
  writer.U64(2);
  writer.Array(std::vector<uint16_t>{3, 4, 5});
  const std::vector<uint8_t> full = writer.Take();
  for (size_t n = 0; n <= full.size(); ++n) {
    // Copy into an exact-size buffer so ASan would flag a read past n.
    std::vector<uint8_t> bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    ByteReader reader(bytes.data(), bytes.size());
    const uint32_t a = reader.U32();
    const uint64_t b = reader.U64();
    const auto* c = static_cast<const uint16_t*>(reader.Array(3, 2));
    EXPECT_EQ(reader.failed(), n < full.size()) << n;
    EXPECT_LE(reader.position(), n);
    if (n >= 4) {
      EXPECT_EQ(a, 1u);
    } else {
      EXPECT_EQ(a, 0u) << "a failed read returns 0";
    }
    if (n >= 16) {
      EXPECT_EQ(b, 2u);
    } else {
      EXPECT_EQ(b, 0u);
    }
    EXPECT_EQ(c != nullptr, n == full.size());
  }
}

TEST(ByteReader, FailureIsStickyAndCountsCannotOverflow) {
  const uint8_t bytes[16] = {1, 0, 0, 0};
  ByteReader reader(bytes, sizeof bytes);
  EXPECT_EQ(reader.Array(std::numeric_limits<size_t>::max(), 4), nullptr) << "count * size would wrap";
  EXPECT_TRUE(reader.failed());
  EXPECT_EQ(reader.U32(), 0u) << "no reads after a failure, even of bytes that exist";
  EXPECT_EQ(reader.Array(0, 1), nullptr);

  ByteReader half(bytes, sizeof bytes);
  EXPECT_EQ(half.Array(std::numeric_limits<size_t>::max() / 2 + 1, 2), nullptr);
  EXPECT_TRUE(half.failed());

  ByteReader empty(nullptr, 0);
  EXPECT_EQ(empty.U64(), 0u);
  EXPECT_TRUE(empty.failed());

  // Alignment padding can itself run past the end.
  ByteReader padded(bytes, 5);
  padded.Array(1, 1);
  EXPECT_EQ(padded.U32(), 0u) << "aligned to 4, then 4 bytes at 4 do not fit in 5";
  EXPECT_TRUE(padded.failed());
}

TEST(ByteReader, ZeroSizedElementsDoNotDivideByZero) {
  const uint8_t bytes[4] = {};
  ByteReader reader(bytes, sizeof bytes);
  reader.Array(3, 1);
  EXPECT_NE(reader.Array(1000, 0), nullptr);
  EXPECT_FALSE(reader.failed());
  EXPECT_EQ(reader.position(), 3u);
}

}  // namespace
}  // namespace memory
}  // namespace tiankong
