// tiankong public C++ API: the BERT WordPiece tokenizer, the top-k decoder and the
// fingerprint cache. This is the whole surface the Embind bindings, the CLI tools,
// the fuzzers and the benchmarks use; everything else in wasm/src is internal.
//
// Offsets: every offset in this API is in UTF-16 code units of the original input
// (what JavaScript's String indices count), so the JS side can slice the user's text
// directly. Native callers pass UTF-8; invalid UTF-8 is reported, never undefined
// behaviour.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tiankong {

// ---------------------------------------------------------------------------
// Tokenizer
// ---------------------------------------------------------------------------

// Options mirror Hugging Face's BertNormalizer + WordPiece model. The defaults are
// bert-base-chinese's: no lowercasing, no accent stripping.
struct TokenizerOptions {
  bool clean_text = true;            // drop U+0000, U+FFFD, control chars; whitespace -> ' '
  bool handle_chinese_chars = true;  // put spaces around CJK ideographs
  bool strip_accents = false;        // NFD + drop Mn (HF: strip_accents=None follows lowercase)
  bool lowercase = false;
  int max_input_chars_per_word = 100;
  int max_length = 512;              // including [CLS] and [SEP]
};

struct Span {
  uint32_t start = 0;  // UTF-16 code units into the original input, half-open
  uint32_t end = 0;
};

// Result of Tokenizer::Encode.
struct Encoding {
  std::vector<int32_t> ids;               // with [CLS] ... [SEP]
  std::vector<std::string> tokens;        // vocab strings, same length as ids
  std::vector<Span> offsets;              // [CLS]/[SEP] get {0,0}
  std::vector<int32_t> mask_positions;    // indices into ids where ids[i] == mask id
  // Number of content tokens dropped because the sequence exceeded max_length.
  // Truncation is never silent: callers must check this (0 = nothing dropped).
  int32_t truncated_tokens = 0;
};

enum class Status { kOk = 0, kInvalidUtf8, kInvalidVocab };

class Tokenizer {
 public:
  // Builds a tokenizer from the bytes of a standard BERT vocab.txt (one token per
  // line, split on '\n' only; a trailing '\r' is NOT stripped because vocab entries
  // such as U+2028 must survive). Returns nullptr and sets *error on failure
  // (empty vocab, missing [UNK]/[CLS]/[SEP]/[MASK]/[PAD], duplicate token).
  static std::unique_ptr<Tokenizer> FromVocab(std::string_view vocab_bytes,
                                              const TokenizerOptions& options,
                                              std::string* error);
  virtual ~Tokenizer() = default;

  // Tokenizes one UTF-8 text exactly like HF `tokenizers` BertWordPiece with the
  // options above, producing [CLS] tokens [SEP]. Special tokens in the raw text are
  // never split. The mask is forgiving: "[MASK]", "[mask]" (any case), full-width
  // "［MASK］" all become the mask token; spaces around it do not matter (they are
  // whitespace and vanish anyway). Returns kInvalidUtf8 (and leaves *out empty) when
  // `text` is not valid UTF-8.
  virtual Status Encode(std::string_view text, Encoding* out) const = 0;

  virtual int32_t VocabSize() const = 0;
  // Returns -1 when absent.
  virtual int32_t TokenToId(std::string_view token) const = 0;
  // Returns "" for out-of-range ids.
  virtual const std::string& IdToToken(int32_t id) const = 0;

  virtual int32_t PadId() const = 0;
  virtual int32_t UnkId() const = 0;
  virtual int32_t ClsId() const = 0;
  virtual int32_t SepId() const = 0;
  virtual int32_t MaskId() const = 0;
};

// ---------------------------------------------------------------------------
// Top-k decoder: logits at the mask positions -> calibrated candidates
// ---------------------------------------------------------------------------

struct DecodeOptions {
  int32_t top_k = 5;
  // Candidates whose probability is below this are not returned; their mass is
  // summed into Decoded::other (together with everything outside the top-k).
  float threshold = 0.0f;
  // Never propose [PAD]/[UNK]/[CLS]/[SEP]/[MASK]/[unusedN] tokens.
  bool exclude_special = true;
  // Never propose "##" continuation pieces (a mask stands for a whole character).
  bool exclude_subwords = true;
  // If non-empty, only these ids may be proposed.
  std::vector<int32_t> allow_ids;
  // These ids are never proposed.
  std::vector<int32_t> deny_ids;
};

struct Candidate {
  int32_t id = 0;
  float probability = 0.0f;  // softmax over the full vocabulary row
};

struct Decoded {
  std::vector<Candidate> candidates;  // sorted by probability desc, then id asc
  float other = 0.0f;                 // 1 - sum(candidates.probability)
};

enum class DecodeStatus { kOk = 0, kNonFinite, kBadShape };

// Precomputes the per-vocab eligibility mask (specials, ## pieces, allow/deny) once
// so each decode is a single pass over the row.
class Decoder {
 public:
  Decoder(const Tokenizer& tokenizer, const DecodeOptions& options);
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // logits: row-major [n_rows, vocab_size]. Writes n_rows results. A NaN or +inf
  // in a row is kNonFinite (-inf is allowed and means probability 0).
  DecodeStatus Decode(const float* logits, size_t n_rows, size_t vocab_size,
                      std::vector<Decoded>* out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------
// Fingerprint LRU cache: canonical token ids + mask positions + decode options
// -> decoded results. Sound: the full key is compared on every hit.
// ---------------------------------------------------------------------------

struct CacheStats {
  uint64_t hits = 0, misses = 0, evictions = 0;
  size_t entries = 0, bytes = 0;
  size_t max_entries = 0, max_bytes = 0;
};

class FingerprintCache {
 public:
  FingerprintCache(size_t max_entries, size_t max_bytes);
  ~FingerprintCache();
  FingerprintCache(const FingerprintCache&) = delete;
  FingerprintCache& operator=(const FingerprintCache&) = delete;

  // The key is the exact byte string built by MakeKey; `value` is opaque bytes
  // (the bindings store serialized decoded results). Thread-safe.
  static std::string MakeKey(const std::vector<int32_t>& ids,
                             const std::vector<int32_t>& mask_positions,
                             std::string_view options_fingerprint);
  // Returns true and copies the value on hit (and marks it most recently used).
  bool Get(const std::string& key, std::string* value);
  void Put(const std::string& key, std::string value);
  void Clear();  // drops entries, keeps counters
  CacheStats Stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiankong
