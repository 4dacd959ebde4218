// tiankong public C++ API: the BERT WordPiece tokenizer, the corpus memory, the top-k decoder
// (which fuses the model with the memory) and the fingerprint cache. This is the whole surface the Embind bindings, the
// CLI tools, the fuzzers and the benchmarks use; everything else in wasm/src is internal.
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
  int max_length = 512;  // including [CLS] and [SEP]
};

struct Span {
  uint32_t start = 0;  // UTF-16 code units into the original input, half-open
  uint32_t end = 0;
};

// What a user typed after the colon of a constrained mask, "[MASK:shang4]" → "shang4" (see
// ParseSoundConstraint); `present` is false for a mask typed without a colon.
struct MaskConstraintText {
  bool present = false;
  std::string text;  // UTF-8, as typed (may be empty: "[MASK:]")
  Span span;         // where `text` is in the input
};

// Result of Tokenizer::Encode.
struct Encoding {
  std::vector<int32_t> ids;                          // with [CLS] ... [SEP]
  std::vector<std::string> tokens;                   // vocab strings, same length as ids
  std::vector<Span> offsets;                         // [CLS]/[SEP] get {0,0}
  std::vector<int32_t> mask_positions;               // indices into ids where ids[i] == mask id
  std::vector<MaskConstraintText> mask_constraints;  // one per mask_positions entry
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
  static std::unique_ptr<Tokenizer> FromVocab(std::string_view vocab_bytes, const TokenizerOptions& options,
                                              std::string* error);
  virtual ~Tokenizer() = default;

  // Tokenizes one UTF-8 text exactly like HF `tokenizers` BertWordPiece with the
  // options above, producing [CLS] tokens [SEP]. Special tokens in the raw text are
  // never split. The mask is forgiving: "[MASK]", "[mask]" (any case), full-width
  // "［MASK］" all become the mask token; spaces around it do not matter (they are
  // whitespace and vanish anyway). A mask may carry a constraint, "[MASK:shang4]", "【MASK：平】":
  // it is still the mask token, and the constraint's text goes to mask_constraints. Returns kInvalidUtf8 (and leaves
  // *out empty) when `text` is not valid UTF-8.
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
// Corpus memory (memory.bin): character n-gram statistics of the training corpus and an exact
// index of famous texts and idioms. Built by the tiankong_build_memory tool for one vocabulary;
// docs/memory-format.md describes the file.
// ---------------------------------------------------------------------------

enum class MemoryStatus { kOk = 0, kTruncated, kBadMagic, kBadVersion, kCorrupt, kWrongVocab, kMismatch };

struct MemoryInfo {
  uint32_t version = 0;
  uint32_t max_order = 0;    // longest n-gram
  uint64_t ngrams = 0;       // n-grams kept (orders 2..max_order)
  uint64_t ngram_slots = 0;  // hash table slots
  uint64_t texts = 0;        // famous texts + idioms indexed
  uint64_t idioms = 0;
  uint64_t units = 0;  // tokens in the index
  uint64_t bytes = 0;  // file size
  std::string build;   // the builder's JSON description (inputs, cut-offs)
};

// Where a candidate comes from: a famous text or an idiom whose passage it completes.
struct MemorySource {
  std::string work;    // e.g. "千家诗"; "成语" for idioms
  std::string title;   // e.g. "静夜思"; the idiom itself
  std::string author;  // e.g. "李白"; "" when unknown or an idiom
  std::string text;    // the sentence of the text the candidate completes, e.g. "床前明月光，疑是地上霜。"
  // For an idiom of a memory built with the idiom dictionary's readings: the idiom's reading
  // ("diū sān là sì", tone marks; each character's first reading where the dictionary gives none)
  // and the reading of the candidate's character in it ("là"). Empty otherwise.
  std::string pinyin;
  std::string reading;
};

// A famous-text / idiom passage supporting a candidate (Memory::SourceOf turns it into text).
struct MemoryHit {
  int32_t text = -1;  // -1: no hit
  uint32_t unit = 0;
  int32_t strength = 0;  // known tokens of the input that agree with the passage around the blank
  bool whole = false;    // the agreement covers a whole idiom or clause
};

// Evidence the memory has for one candidate at one blank (see Memory::Evidence).
struct CandidateEvidence {
  int32_t id = 0;
  // Log-probability gain over the no-context estimate, split by the length of the n-gram that
  // matched (index 2..8; 0 and 1 unused): sum over the n-gram windows through the blank.
  float ngram_gain[9] = {};
  float unigram = 0.0f;  // log P(id) in the corpus
  MemoryHit hit;
};

class Memory {
 public:
  // Verifies and takes over the bytes of a memory.bin built for `tokenizer`'s vocabulary:
  // magic, version, checksums, section bounds and every token id inside. Returns nullptr with
  // *status and a specific *error when the file is truncated, corrupt, of another format
  // version or built for another vocabulary. The memory does not keep `tokenizer`.
  static std::unique_ptr<Memory> Load(std::vector<uint8_t> bytes, const Tokenizer& tokenizer, MemoryStatus* status,
                                      std::string* error);
  // A memory split in two (SplitNgrams): `base` (memory.bin: everything a first answer needs, its
  // n-gram table only the bigrams) and `ngrams` (memory-ngrams.bin: the longer n-grams), checked
  // as Load checks one file and against each other (one build: kMismatch otherwise). The pair
  // answers exactly as the whole file; `base` alone (the one-argument Load) answers from bigrams.
  static std::unique_ptr<Memory> Load(std::vector<uint8_t> base, std::vector<uint8_t> ngrams,
                                      const Tokenizer& tokenizer, MemoryStatus* status, std::string* error);
  virtual ~Memory() = default;

  virtual const MemoryInfo& Info() const = 0;

  // log P(token) in the corpus, for every vocabulary id.
  virtual const float* UnigramLogProbs() const = 0;

  // Candidate token ids for the blank at ids[mask_positions[target]]: tokens that follow the
  // left neighbour or precede the right neighbour most often, tokens that complete a famous text
  // or idiom there, and the memory's own best guesses by its n-gram score (a rare successor whose
  // longer context matches). Appended to *out (duplicates possible).
  virtual void ProposeCandidates(const int32_t* ids, size_t n_ids, const int32_t* mask_positions, size_t n_masks,
                                 size_t target, std::vector<int32_t>* out) const = 0;

  // Evidence for each candidate at the blank ids[mask_positions[target]]: the n-gram windows
  // through it (other blanks are unknown: windows stop there) and the best famous-text / idiom
  // passage that agrees with at least `min_hit_strength` known tokens around it (2 when the
  // agreement covers a whole idiom or clause).
  virtual void Evidence(const int32_t* ids, size_t n_ids, const int32_t* mask_positions, size_t n_masks, size_t target,
                        const int32_t* candidates, size_t n_candidates, int32_t min_hit_strength,
                        std::vector<CandidateEvidence>* out) const = 0;

  // The text behind a hit (hit.text must come from this memory).
  virtual MemorySource SourceOf(const MemoryHit& hit) const = 0;
};

// ---------------------------------------------------------------------------
// Output layer (head.bin): the model's tied word-embedding table and MLM bias, so the core
// computes both ends of the network: the input embeddings of the ids (ONNX Runtime then runs the
// encoder and the MLM head's transform) and the logits of the hidden states at the masks, with
// SIMD int8 dot products and one scale per vocabulary row. output_layer.cc documents the file.
// ---------------------------------------------------------------------------

class OutputLayer {
 public:
  // Verifies (magic, version, sizes, CRC-32, finite values) and takes over the bytes of a head.bin
  // for a model with `vocab_size` tokens (an int8 or float16 table is widened to float32 once, here,
  // and the bytes released). Returns nullptr and a specific *error otherwise.
  static std::unique_ptr<OutputLayer> Load(std::vector<uint8_t> bytes, int32_t vocab_size, std::string* error);
  virtual ~OutputLayer() = default;

  virtual int32_t HiddenSize() const = 0;
  virtual int32_t VocabSize() const = 0;
  // The table as stored in the file: "int8" (a scale per row), "f16" (computed as float32) or "f32".
  virtual const char* DType() const = 0;
  // out[n * HiddenSize()] = the table rows of `ids` (dequantised). False if an id is out of range.
  virtual bool Embed(const int32_t* ids, size_t n, float* out) const = 0;
  // logits[m * VocabSize()] = hidden[m * HiddenSize()] x table^T + bias, in float32 whatever the
  // stored type (gemv_kernels.h).
  virtual void Logits(const float* hidden, size_t m, float* logits) const = 0;
};

// ---------------------------------------------------------------------------
// Top-k decoder: logits at the mask positions -> calibrated candidates
// ---------------------------------------------------------------------------

// How the decoder fuses the memory with the model: every token's score is
//   model * logit + unigram * log P_corpus(token)
// and each candidate the memory scored gains
//   sum_n ngram[n] * gain_n  +  (hit ? hit_base + hit_per_token * strength + (whole ? hit_whole : 0) : 0)
// before the softmax over the whole vocabulary (so the result stays a distribution). With a floor
// f > 0 the shown distribution is (1 - f) * that + f * softmax(logit), the model's own: a candidate
// the memory is sure of shows at most about 1 - f, and the model's alternatives keep a share of
// what it gives them. The weights
// are tuned per model on held-out text (scripts/tune-fusion: the floor and a common scale are fitted
// for the log-loss of the shown top-1 probability) and stored in model.json.
struct FusionWeights {
  float model = 1.0f;
  float unigram = 0.0f;
  float ngram[9] = {0.0f, 0.0f, 0.2f, 0.4f, 0.6f, 0.8f, 0.8f, 0.8f, 0.8f};
  float hit_base = 2.0f;
  float hit_per_token = 1.0f;
  float hit_whole = 2.0f;
  int32_t min_hit_strength = 3;
  int32_t model_candidates = 48;  // the model's best tokens that the memory scores too
  float floor = 0.0f;             // share of the model's own distribution in the shown one, [0, 0.5]
};

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
  // Fuse this memory with the model (nullptr: the model alone). Not owned; must outlive the decoder.
  const Memory* memory = nullptr;
  FusionWeights fusion;
};

struct Candidate {
  int32_t id = 0;
  float probability = 0.0f;  // softmax over the full vocabulary row
  MemoryHit hit;             // the famous text / idiom it completes (hit.text = -1: none)
};

// The input a row of logits belongs to: the decoder's memory reads the context around the blank.
struct MaskContext {
  const int32_t* ids = nullptr;  // the whole encoded input, [CLS] ... [SEP]
  size_t n_ids = 0;
  const int32_t* mask_positions = nullptr;  // row r of the logits is the blank at ids[mask_positions[r]]
  size_t n_masks = 0;
  // Per row, null or VocabSize() bytes: the tokens the blank's own constraint admits (e.g.
  // SoundEligibility). A constrained row's probabilities are renormalised over those tokens, and
  // the memory's proposals outside them are dropped.
  const uint8_t* const* allowed = nullptr;
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
  // in a row is kNonFinite (-inf is allowed and means probability 0). With a memory in the
  // options, `context` must describe the input (n_rows == context.n_masks), else kBadShape.
  DecodeStatus Decode(const float* logits, size_t n_rows, size_t vocab_size, std::vector<Decoded>* out) const;
  DecodeStatus Decode(const float* logits, size_t n_rows, size_t vocab_size, const MaskContext& context,
                      std::vector<Decoded>* out) const;

  // Whether the options let this decoder propose token `id` (false outside the vocabulary), and
  // how many tokens they let it propose (0: a filter that can never yield a candidate).
  bool Eligible(int32_t id) const;
  size_t EligibleCount() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------
// Pinyin: Mandarin readings of characters (a table generated from Unicode's Unihan) and
// constraints on a blank by sound, "[MASK:shang4]" (sound_constraint.cc)
// ---------------------------------------------------------------------------

// What a blank must sound like: a syllable with or without its tone, or a tone class of
// 中华新韵 (平: tones 1-2, 仄: tones 3-4; the neutral tone is neither). A character matches when
// any of its readings does, so a polyphone such as 长 (cháng, zhǎng) is both 平 and 仄.
struct SoundConstraint {
  int32_t syllable = -1;   // index of the toneless syllable; -1 for a tone class
  int32_t tone = 0;        // 1-4, 5 neutral; 0: any tone
  int32_t tone_class = 0;  // 1 平, 2 仄; 0: a syllable constraint
};

// Parses a constraint as a user types it: "shang" (any tone), "shang4" / "shàng" (that tone),
// ü as "ü", "v" or "u:" ("lv4", "lǜ"), "平" or "仄"; case, full-width letters and surrounding
// spaces do not matter. False and a message for the user in *error (an empty constraint, a
// syllable Mandarin does not have, a tone outside 1-5).
bool ParseSoundConstraint(std::string_view text, SoundConstraint* out, std::string* error);

// The constraint as shown to a user: "shàng", "shang" (any tone), "平", "仄".
std::string FormatSoundConstraint(const SoundConstraint& constraint);

// Whether character `c` has a reading the constraint accepts (false for characters without one).
bool SoundAccepts(const SoundConstraint& constraint, char32_t c);

// eligible[id] == 1 for the vocabulary tokens that are one character the constraint accepts;
// size tokenizer.VocabSize(). The decoder restricts a blank to these (MaskContext::allowed).
std::vector<uint8_t> SoundEligibility(const Tokenizer& tokenizer, const SoundConstraint& constraint);

// The readings of one character of a text, likeliest first.
struct CharReadings {
  Span span;                          // the character in the text (UTF-16 units)
  std::vector<std::string> readings;  // "shàng" (or "shang4" without marks)
  std::vector<int8_t> tones;          // each reading's tone, 1-5
  std::vector<uint8_t> standard;      // 1: a standard reading (modern Mandarin), 0: a classical one
  std::vector<uint8_t> classes;       // each reading's tone class (中华新韵): 1 平, 2 仄, 0 neither (neutral)
};

// The readings of every character of `text` (UTF-8) the table has readings for, in order;
// others (punctuation, Latin, characters outside the table) are skipped. Text after an invalid
// UTF-8 sequence is ignored. With `prefer`, each character's readings that meet it come first
// (otherwise likeliest first), as a candidate of a constrained blank shows them.
std::vector<CharReadings> ReadingsOfText(std::string_view text, bool marks = true,
                                         const SoundConstraint* prefer = nullptr);

// ---------------------------------------------------------------------------
// Spelling check (纠错): the characters a wrong one may have been typed for (confusion.cc);
// the runtime scores them against the original in context with the decoder.
// ---------------------------------------------------------------------------

// How two characters are confused, closest first: the same syllable in any tone (在/再), a
// syllable of one fuzzy-pinyin swap (z/zh, c/ch, s/sh, n/l, an/ang, en/eng, in/ing: 四/是), or a
// similar picture (未/末, shape.h).
enum class ConfusionKind : uint8_t { kSound = 1, kNearSound = 2, kShape = 3 };

struct Confusion {
  int32_t id = 0;
  ConfusionKind kind = ConfusionKind::kSound;
};

class ConfusionSets {
 public:
  // Indexes the one-character tokens of `tokenizer`'s vocabulary by the syllables of their two
  // likeliest readings (the object keeps no reference to the tokenizer).
  explicit ConfusionSets(const Tokenizer& tokenizer);
  ~ConfusionSets();
  ConfusionSets(const ConfusionSets&) = delete;
  ConfusionSets& operator=(const ConfusionSets&) = delete;

  // The vocabulary tokens token `id` may have been typed for, each once with its closest kind,
  // ordered by kind, then id; never `id` itself or a special token. Empty when `id` is not one
  // character, or nothing sounds or looks like it.
  std::vector<Confusion> Of(int32_t id) const;

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
  static std::string MakeKey(const std::vector<int32_t>& ids, const std::vector<int32_t>& mask_positions,
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
