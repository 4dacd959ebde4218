// libFuzzer target: the corpus memory (build with the `fuzz` preset: clang, ASan + UBSan; run with
// scripts/fuzz). The first input byte picks the mode:
//   0  the rest is a memory.bin for Memory::Load, as is: it must never crash; when it loads, it
//      is queried with contexts derived from the input (random blanks, wildcards, boundaries).
//   1  the same, but the header's vocabulary, size and every CRC are fixed up first, so the
//      mutations reach the section parsers instead of stopping at a checksum.
//   2  the rest is a query (token ids, blanks, boundaries, target, min strength) for a fixed valid
//      memory: Evidence, ProposeCandidates, SourceOf and the fused Decoder on long, odd inputs.
//   3  the rest is the second part of a split memory (memory-ngrams.bin, CRCs fixed up as in mode
//      1) loaded beside the fixed valid memory's first part: Memory::Load(base, ngrams), then queried.
// Invariants checked besides "no crash, no UB": Load fails with a status and a message or
// succeeds with kOk; proposals are vocabulary ids; Evidence answers every candidate in order with
// finite gains; hits name a real text with at least one agreeing token and a non-empty source;
// fused probabilities stay a distribution.
// Seeds: TK_MEMORY_FUZZ_WRITE_SEEDS=DIR ./memory_fuzz writes a valid memory (modes 0 and 1) and
// a few queries (mode 2) into DIR and exits (scripts/fuzz does this before each run).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "memory_builder.h"
#include "memory_format.h"
#include "tiankong/tiankong.h"

namespace {

using tiankong::CandidateEvidence;
using tiankong::Memory;
using tiankong::MemoryStatus;

// [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4, a "##" piece, then single characters (< 0xF0 ids, so
// mode 2 can spell any id in one byte).
constexpr char kVocab[] =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n##天\n天\n地\n人\n山\n水\n日\n月\n风\n云\n花\n，\n。\n"
    "床\n前\n明\n光\n疑\n是\n上\n霜\n举\n头\n望\n低\n思\n故\n乡\n掩\n耳\n盗\n铃\n钟\n画\n蛇\n添\n足\n";
constexpr char kPoem[] = "床前明月光，疑是地上霜。举头望明月，低头思故乡。";

const tiankong::Tokenizer* g_tokenizer = nullptr;
const Memory* g_memory = nullptr;  // the fixed valid memory (mode 2)
std::vector<uint8_t>* g_memory_bytes = nullptr;
// A split of that memory (memory::SplitNgrams): mode 3 fuzzes the n-gram part beside the base.
std::vector<uint8_t>* g_base_part = nullptr;
std::vector<uint8_t>* g_ngram_part = nullptr;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "invariant violated: %s\n", what);
  std::abort();
}

// Deterministic bytes -> numbers (an exhausted input reads as zeros).
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t n) : data_(data), n_(n) {}
  uint8_t Next() { return pos_ < n_ ? data_[pos_++] : 0; }
  uint32_t Next32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | Next();
    return v;
  }
  size_t left() const { return n_ - pos_; }

 private:
  const uint8_t* data_;
  size_t n_, pos_ = 0;
};

// splitmix64: contexts for loaded memories derive from a hash of the input.
struct Rng {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t Below(uint32_t n) { return n == 0 ? 0 : static_cast<uint32_t>(Next() % n); }
};

struct Query {
  std::vector<int32_t> ids;
  std::vector<int32_t> masks;  // may hold positions outside ids (the API ignores those)
  size_t target = 0;
  int32_t min_strength = 3;
  std::vector<int32_t> candidates;
};

// Runs every query entry point on one blank and checks the answers. `valid`: the memory is the
// builder's (a hostile file may legally hold texts that render as "").
void RunQuery(const Memory& memory, const Query& q, bool valid) {
  const int32_t vocab = g_tokenizer->VocabSize();
  const tiankong::MemoryInfo& info = memory.Info();
  std::vector<int32_t> proposed = {-12345};
  memory.ProposeCandidates(q.ids.data(), q.ids.size(), q.masks.data(), q.masks.size(), q.target, &proposed);
  if (proposed.front() != -12345) Fail("ProposeCandidates must append");
  for (size_t i = 1; i < proposed.size(); ++i) {
    if (proposed[i] < 0 || proposed[i] >= vocab) Fail("proposed id outside the vocabulary");
  }
  std::vector<int32_t> candidates = q.candidates;
  candidates.insert(candidates.end(), proposed.begin() + 1, proposed.end());
  std::vector<CandidateEvidence> evidence;
  memory.Evidence(q.ids.data(), q.ids.size(), q.masks.data(), q.masks.size(), q.target, candidates.data(),
                  candidates.size(), q.min_strength, &evidence);
  const bool answerable =
      q.target < q.masks.size() && q.masks[q.target] >= 0 && static_cast<size_t>(q.masks[q.target]) < q.ids.size();
  if (evidence.size() != (answerable ? candidates.size() : 0)) Fail("Evidence size");
  for (size_t i = 0; i < evidence.size(); ++i) {
    const CandidateEvidence& e = evidence[i];
    if (e.id != candidates[i]) Fail("Evidence order");
    for (const float gain : e.ngram_gain) {
      if (!std::isfinite(gain) || std::fabs(gain) > 1e4f) Fail("n-gram gain not finite");
    }
    if (e.ngram_gain[0] != 0.0f || e.ngram_gain[1] != 0.0f) Fail("gains below bigrams");
    const bool in_vocab = e.id >= 0 && e.id < vocab;
    if (in_vocab && !(e.unigram <= 0.0f && e.unigram >= -100.0f)) Fail("unigram log p");
    if (e.hit.text < 0) continue;
    if (!in_vocab) Fail("hit for an id outside the vocabulary");
    if (static_cast<uint64_t>(e.hit.text) >= info.texts || e.hit.unit >= info.units) Fail("hit outside the index");
    if (e.hit.strength < 1 || (e.hit.strength < q.min_strength && !(e.hit.whole && e.hit.strength >= 2))) {
      Fail("hit weaker than asked for");
    }
    const tiankong::MemorySource source = memory.SourceOf(e.hit);
    if (valid && source.text.empty()) Fail("a hit without text");
    // Hits from a text but with another unit (the bindings accept any u32).
    tiankong::MemoryHit odd = e.hit;
    odd.unit = static_cast<uint32_t>(info.units) + e.hit.unit * 977u;
    memory.SourceOf(odd);
  }
  memory.SourceOf({-1, 0, 0, false});
  memory.SourceOf({static_cast<int32_t>(info.texts), 0, 0, false});
}

// The fused decoder over all blanks of the query (only when they are real positions).
void RunDecoder(const Memory& memory, const Query& q, Rng* rng) {
  for (const int32_t m : q.masks) {
    if (m < 0 || static_cast<size_t>(m) >= q.ids.size()) return;
  }
  if (q.masks.empty() || q.masks.size() > 8) return;
  const size_t vocab = static_cast<size_t>(g_tokenizer->VocabSize());
  std::vector<float> logits(q.masks.size() * vocab);
  for (float& v : logits) v = static_cast<float>(rng->Below(2001)) / 100.0f - 10.0f;
  tiankong::DecodeOptions options;
  options.top_k = 1 + static_cast<int32_t>(rng->Below(8));
  options.memory = &memory;
  options.fusion.min_hit_strength = q.min_strength;
  options.fusion.model_candidates = static_cast<int32_t>(rng->Below(12));
  const tiankong::Decoder decoder(*g_tokenizer, options);
  const tiankong::MaskContext context{q.ids.data(), q.ids.size(), q.masks.data(), q.masks.size()};
  std::vector<tiankong::Decoded> out;
  if (decoder.Decode(logits.data(), q.masks.size(), vocab, context, &out) != tiankong::DecodeStatus::kOk) {
    Fail("fused decode failed");
  }
  for (const tiankong::Decoded& d : out) {
    double sum = d.other;
    for (const tiankong::Candidate& c : d.candidates) {
      if (!(c.probability >= 0.0f && c.probability <= 1.0f)) Fail("probability");
      sum += c.probability;
    }
    if (!(d.other >= 0.0f) || std::fabs(sum - 1.0) > 1e-3) Fail("not a distribution");
  }
}

// A random query for a loaded memory: ids over the whole vocabulary (specials included),
// blanks, unlisted [MASK]s and bogus mask positions.
Query RandomQuery(Rng* rng) {
  const int32_t vocab = g_tokenizer->VocabSize();
  Query q;
  const size_t n = 1 + rng->Below(40);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t r = rng->Below(10);
    q.ids.push_back(r == 0 ? g_tokenizer->MaskId() : static_cast<int32_t>(rng->Below(static_cast<uint32_t>(vocab))));
    if (r == 1) {
      q.masks.push_back(static_cast<int32_t>(i));
      q.ids[i] = g_tokenizer->MaskId();
    }
  }
  if (rng->Below(8) == 0) q.masks.push_back(static_cast<int32_t>(rng->Below(100)) - 50);
  if (q.masks.empty()) q.masks.push_back(static_cast<int32_t>(rng->Below(static_cast<uint32_t>(n))));
  q.target = rng->Below(static_cast<uint32_t>(q.masks.size() + 1));
  q.min_strength = static_cast<int32_t>(rng->Below(7)) - 1;
  for (int i = 0; i < 6; ++i)
    q.candidates.push_back(static_cast<int32_t>(rng->Below(static_cast<uint32_t>(vocab) + 4)) - 2);
  return q;
}

// Mode 2: byte >= 0xF0 are control codes, others token ids (mod the vocabulary).
Query ParseQuery(Bytes* in) {
  const int32_t vocab = g_tokenizer->VocabSize();
  Query q;
  const uint8_t target = in->Next();
  q.min_strength = static_cast<int32_t>(in->Next() % 9) - 2;
  const uint8_t extra = in->Next();
  while (in->left() > 0 && q.ids.size() < 20000) {  // long inputs, but fast executions
    const uint8_t b = in->Next();
    const auto position = static_cast<int32_t>(q.ids.size());
    if (b == 0xFF) {  // a listed blank
      q.masks.push_back(position);
      q.ids.push_back(g_tokenizer->MaskId());
    } else if (b == 0xFE) {  // a listed position holding whatever comes next
      q.masks.push_back(position);
    } else if (b == 0xFD) {  // a bogus mask position
      q.masks.push_back(position * 31 - 7);
    } else if (b == 0xFC) {  // a candidate to score
      q.candidates.push_back(static_cast<int32_t>(in->Next()) - 3);
    } else if (b >= 0xF0) {  // a run of one token (long inputs)
      const int32_t id = in->Next() % vocab;
      q.ids.insert(q.ids.end(), 16u * (b - 0xEF), id);
    } else {
      q.ids.push_back(b % vocab);
    }
  }
  if (q.masks.empty() && !q.ids.empty()) {
    q.masks.push_back(static_cast<int32_t>(extra % q.ids.size()));
  }
  q.target = q.masks.empty() ? 0 : target % (q.masks.size() + 1);  // sometimes past the last mask
  for (int32_t c = 0; c < vocab; c += 1 + extra % 7) q.candidates.push_back(c);
  return q;
}

// Mode 1: make the header and checksums consistent with whatever the sections now hold.
void FixUp(std::vector<uint8_t>* file) {
  namespace m = tiankong::memory;
  if (file->size() < m::kHeaderBytes) return;
  uint8_t* p = file->data();
  std::memcpy(p, m::kMagic, sizeof m::kMagic);
  const uint32_t version = m::kVersion, vocab = static_cast<uint32_t>(g_tokenizer->VocabSize());
  const uint64_t size = file->size(), fingerprint = m::VocabFingerprint(*g_tokenizer);
  std::memcpy(p + 8, &version, 4);
  std::memcpy(p + 16, &size, 8);
  std::memcpy(p + 24, &fingerprint, 8);
  std::memcpy(p + 32, &vocab, 4);
  uint32_t count;
  std::memcpy(&count, p + 12, 4);
  if (count > 64) count %= 8;
  const size_t table_end = m::kHeaderBytes + size_t{count} * m::kSectionEntryBytes;
  if (table_end > file->size()) return;
  std::memcpy(p + 12, &count, 4);
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t* entry = p + m::kHeaderBytes + size_t{i} * m::kSectionEntryBytes;
    uint64_t offset, bytes;
    std::memcpy(&offset, entry + 8, 8);
    std::memcpy(&bytes, entry + 16, 8);
    if (offset > file->size() || bytes > file->size() - offset) continue;
    const uint32_t crc = m::Crc32(p + offset, static_cast<size_t>(bytes));
    std::memcpy(entry + 4, &crc, 4);
  }
  uint32_t crc = m::Crc32(p, 36);
  crc = m::Crc32(p + m::kHeaderBytes, table_end - m::kHeaderBytes, crc);
  std::memcpy(p + 36, &crc, 4);
}

// `base` given: `file` is the n-gram part of a split memory whose first part is *base.
void LoadAndQuery(std::vector<uint8_t> file, uint64_t seed, const std::vector<uint8_t>* base = nullptr) {
  const size_t size = file.size() + (base ? base->size() : 0);
  MemoryStatus status = MemoryStatus::kOk;
  std::string error;
  const std::unique_ptr<Memory> memory = base ? Memory::Load(*base, std::move(file), *g_tokenizer, &status, &error)
                                              : Memory::Load(std::move(file), *g_tokenizer, &status, &error);
  if (memory == nullptr) {
    if (status == MemoryStatus::kOk || error.empty()) Fail("a failed Load must say why");
    return;
  }
  if (status != MemoryStatus::kOk) Fail("a memory with a failure status");
  const tiankong::MemoryInfo& info = memory->Info();
  if (info.bytes != size) Fail("Info().bytes");
  const float* unigram = memory->UnigramLogProbs();
  for (int32_t id = 0; id < g_tokenizer->VocabSize(); ++id) {
    if (!(unigram[id] <= 0.0f && unigram[id] >= -100.0f)) Fail("unigram of a loaded memory");
  }
  Rng rng{seed};
  for (int i = 0; i < 4; ++i) {
    const Query q = RandomQuery(&rng);
    RunQuery(*memory, q, /*valid=*/false);
    if (i == 0) RunDecoder(*memory, q, &rng);
  }
  for (int32_t t = 0; t < static_cast<int32_t>(info.texts) && t < 64; ++t) {
    memory->SourceOf({t, rng.Below(static_cast<uint32_t>(info.units) + 2), 1, false});
  }
}

std::vector<uint8_t> BuildValidMemory(const tiankong::Tokenizer& tokenizer) {
  namespace m = tiankong::memory;
  m::BuildOptions options;
  options.order = 4;
  options.min_count = 1;
  options.max_ngrams = 400;
  m::MemoryBuilder builder(tokenizer, options);
  const char* lines[] = {"天地人山水。",
                         "山水日月风云花。",
                         "日月风云，天地人。",
                         "花月山水，风云日月。",
                         "天地山水花，人日月风云。",
                         "云山水月，花天地。",
                         "风花雪月，天地人。",
                         kPoem};
  for (int repeat = 0; repeat < 3; ++repeat) {
    for (const char* line : lines) builder.AddLine(line);
  }
  m::SourceText poem;
  poem.work = "千家诗";
  poem.title = "静夜思";
  poem.author = "李白";
  poem.text = kPoem;
  builder.AddText(poem);
  for (const char* idiom : {"掩耳盗铃", "掩耳盗钟", "画蛇添足"}) {
    m::SourceText text;
    text.idiom = true;
    text.text = idiom;
    builder.AddText(text);
  }
  m::SourceText unknown;
  unknown.work = "测试";
  unknown.text = "猫山水花。";  // 猫: [UNK], its original text is kept
  builder.AddText(unknown);
  m::BuildReport report;
  std::string error;
  std::vector<uint8_t> bytes = builder.Finish(&report, &error);
  if (bytes.empty()) {
    std::fprintf(stderr, "memory_fuzz: cannot build the seed memory: %s\n", error.c_str());
    std::abort();
  }
  return bytes;
}

void WriteSeed(const std::string& dir, const std::string& name, uint8_t mode, const std::vector<uint8_t>& body) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.put(static_cast<char>(mode));
  out.write(reinterpret_cast<const char*>(body.data()), static_cast<std::streamsize>(body.size()));
  if (!out) {
    std::fprintf(stderr, "memory_fuzz: cannot write %s/%s\n", dir.c_str(), name.c_str());
    std::exit(1);
  }
}

void WriteSeeds(const std::string& dir) {
  WriteSeed(dir, "memory-raw", 0, *g_memory_bytes);
  WriteSeed(dir, "memory-fixup", 1, *g_memory_bytes);
  WriteSeed(dir, "ngrams-fixup", 3, *g_ngram_part);
  // Queries in mode 2's spelling: target, min strength, extra, then ids (0xFF = a blank).
  int n = 0;
  for (const char* text : {"疑是地[MASK]霜", "掩耳盗[MASK]", "天地掩耳[MASK][MASK]山水", "床前明[MASK]光，[MASK]是",
                           "[MASK]山水花。", "画蛇[MASK][MASK]，天地人"}) {
    tiankong::Encoding encoding;
    g_tokenizer->Encode(text, &encoding);
    std::vector<uint8_t> body = {0, 5, 3};
    for (const int32_t id : encoding.ids) body.push_back(id == g_tokenizer->MaskId() ? 0xFF : static_cast<uint8_t>(id));
    WriteSeed(dir, "query-" + std::to_string(n++), 2, body);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::string error;
  static std::unique_ptr<tiankong::Tokenizer> tokenizer =
      tiankong::Tokenizer::FromVocab(kVocab, tiankong::TokenizerOptions{}, &error);
  if (!tokenizer || tokenizer->VocabSize() >= 0xF0) {
    std::fprintf(stderr, "memory_fuzz: bad built-in vocab: %s\n", error.c_str());
    std::abort();
  }
  g_tokenizer = tokenizer.get();
  static std::vector<uint8_t> bytes = BuildValidMemory(*tokenizer);
  g_memory_bytes = &bytes;
  MemoryStatus status;
  static std::unique_ptr<Memory> memory = Memory::Load(bytes, *tokenizer, &status, &error);
  if (!memory) {
    std::fprintf(stderr, "memory_fuzz: the seed memory does not load: %s\n", error.c_str());
    std::abort();
  }
  g_memory = memory.get();
  static std::vector<uint8_t> base, ngrams;
  if (!tiankong::memory::SplitNgrams(bytes.data(), bytes.size(), &base, &ngrams, &error)) {
    std::fprintf(stderr, "memory_fuzz: the seed memory does not split: %s\n", error.c_str());
    std::abort();
  }
  g_base_part = &base;
  g_ngram_part = &ngrams;
  if (const char* dir = std::getenv("TK_MEMORY_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 4;
  std::vector<uint8_t> rest(data + 1, data + size);
  if (mode == 2) {
    Bytes in(rest.data(), rest.size());
    const Query q = ParseQuery(&in);
    RunQuery(*g_memory, q, /*valid=*/true);
    Rng rng{rest.size() * 0x9E3779B97F4A7C15ull};
    RunDecoder(*g_memory, q, &rng);
    return 0;
  }
  uint64_t seed = 0xcbf29ce484222325ull;  // FNV-1a of the input: the contexts follow the bytes
  for (const uint8_t b : rest) seed = (seed ^ b) * 0x100000001b3ull;
  if (mode == 1 || mode == 3) FixUp(&rest);
  LoadAndQuery(std::move(rest), seed, mode == 3 ? g_base_part : nullptr);
  return 0;
}
