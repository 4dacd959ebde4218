// Embind bindings of the tiankong core: marshalling only. The JS-visible surface is
// specified by web/src/core/core-module.ts; every behaviour lives in wasm/src.
//
// Arrays cross the boundary in bulk: a JS typed array is copied into the wasm heap
// with one TypedArray.prototype.set over a typed_memory_view, and results leave as
// fresh typed arrays constructed from a view (one memcpy each). No per-element calls.
//
// Errors: user mistakes become thrown JS Errors with specific messages. A JS exception
// unwinds the wasm stack without running C++ destructors, so each bound function does
// its work in a helper that returns an error message (or nullptr) after its locals are
// gone, then releases its own `val` arguments and throws. Messages live in a static
// buffer, so nothing leaks on the error path.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tiankong/tiankong.h"

#ifndef TK_VERSION
#define TK_VERSION "dev"
#endif

EM_JS(void, tk_throw_error, (const char* message), { throw new Error(UTF8ToString(message)); });

namespace tiankong {
namespace bindings {
namespace {

using emscripten::typed_memory_view;
using emscripten::val;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

char g_error[512];

// printf-style message into g_error; returns g_error so helpers can `return Fail(...)`.
const char* Fail(const char* format, ...) __attribute__((format(printf, 1, 2)));
const char* Fail(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(g_error, sizeof g_error, format, args);
  va_end(args);
  return g_error;
}

// Drops the caller's `val` arguments (their destructors will not run) and throws.
template <typename... Vals>
[[noreturn]] void Throw(const char* message, Vals&... args) {
  ((args = val::undefined()), ...);
  tk_throw_error(message);
  __builtin_unreachable();
}

// ---------------------------------------------------------------------------
// Typed arrays and option objects
// ---------------------------------------------------------------------------

template <typename T>
val NewTypedArray(const char* type, const T* data, size_t n) {
  return val::global(type).new_(typed_memory_view(n, data));
}

// Copies a JS typed array of the given type into *out with a single bulk copy.
// Returns an error message, or nullptr.
template <typename T>
const char* CopyTypedArray(const val& array, const char* type, const char* what, std::vector<T>* out) {
  if (!array.instanceof (val::global(type))) {
    return Fail("%s must be %s %s, got %s", what, type[0] == 'I' ? "an" : "a", type,
                array.typeOf().as<std::string>().c_str());
  }
  out->resize(array["length"].as<size_t>());
  val(typed_memory_view(out->size(), out->data())).call<void>("set", array);
  return nullptr;
}

// Reads an integer argument passed as a JS number.
const char* ReadCount(double value, const char* what, double max, size_t* out) {
  if (!(value >= 0 && value <= max) || std::floor(value) != value) {
    return Fail("%s must be an integer in [0, %.0f], got %.15g", what, max, value);
  }
  *out = static_cast<size_t>(value);
  return nullptr;
}

// Reads the fields of a plain options object. A missing field (or a missing object)
// keeps the C++ default; a field of the wrong type or range is an error. The first
// error wins and is reported by error().
class OptionsReader {
 public:
  OptionsReader(const val& object, const char* type_name) : object_(object), type_(type_name) {
    if (!object.isUndefined() && !object.isNull() && object.typeOf().as<std::string>() != "object") {
      error_ = Fail("%s must be an object", type_);
    }
  }

  void Bool(const char* name, bool* out) {
    const val field = Field(name);
    if (field.isUndefined()) return;
    if (field.typeOf().as<std::string>() != "boolean") {
      error_ = Fail("%s.%s must be a boolean", type_, name);
      return;
    }
    *out = field.as<bool>();
  }

  void Int(const char* name, int32_t min, int32_t max, int32_t* out) {
    const val field = Field(name);
    if (field.isUndefined()) return;
    const double value = field.isNumber() ? field.as<double>() : NAN;
    if (!(value >= min && value <= max) || std::floor(value) != value) {
      error_ = Fail("%s.%s must be an integer in [%d, %d]", type_, name, min, max);
      return;
    }
    *out = static_cast<int32_t>(value);
  }

  void Number(const char* name, float min, float max, float* out) {
    const val field = Field(name);
    if (field.isUndefined()) return;
    const double value = field.isNumber() ? field.as<double>() : NAN;
    if (!(value >= min && value <= max)) {
      error_ = Fail("%s.%s must be a number in [%g, %g]", type_, name, min, max);
      return;
    }
    *out = static_cast<float>(value);
  }

  // A Float32Array of finite numbers.
  void Floats(const char* name, std::vector<float>* out) {
    const val field = Field(name);
    if (field.isUndefined()) return;
    const std::string what = std::string(type_) + "." + name;
    if (const char* error = CopyTypedArray(field, "Float32Array", what.c_str(), out)) {
      error_ = error;
      return;
    }
    for (const float value : *out) {
      if (!std::isfinite(value)) {
        error_ = Fail("%s must hold finite numbers", what.c_str());
        return;
      }
    }
  }

  // An Int32Array of token ids, each in [0, vocab_size).
  void Ids(const char* name, int32_t vocab_size, std::vector<int32_t>* out) {
    const val field = Field(name);
    if (field.isUndefined()) return;
    const std::string what = std::string(type_) + "." + name;
    if (const char* error = CopyTypedArray(field, "Int32Array", what.c_str(), out)) {
      error_ = error;
      return;
    }
    for (size_t i = 0; i < out->size(); ++i) {
      if ((*out)[i] < 0 || (*out)[i] >= vocab_size) {
        error_ = Fail("%s[%zu] = %d is not a token id (vocab size %d)", what.c_str(), i, (*out)[i], vocab_size);
        return;
      }
    }
  }

  const char* error() const { return error_; }

 private:
  val Field(const char* name) const {
    if (error_ != nullptr || object_.isUndefined() || object_.isNull()) return val::undefined();
    return object_[name];
  }

  const val& object_;
  const char* type_;
  const char* error_ = nullptr;
};

// ---------------------------------------------------------------------------
// Tokenizer
// ---------------------------------------------------------------------------

class TokenizerHandle {
 public:
  explicit TokenizerHandle(std::unique_ptr<Tokenizer> tokenizer) : tokenizer_(std::move(tokenizer)) {}

  const Tokenizer& tokenizer() const { return *tokenizer_; }

  val Encode(val text) const {
    val result = val::undefined();
    if (const char* error = TryEncode(text, &result)) Throw(error, text);
    return result;
  }

  int32_t VocabSize() const { return tokenizer_->VocabSize(); }

  val IdToToken(double id) const {
    if (!(id >= 0 && id < tokenizer_->VocabSize()) || std::floor(id) != id) {
      Throw(Fail("Tokenizer.idToToken: %g is not a token id (vocab size %d)", id, tokenizer_->VocabSize()));
    }
    return val(tokenizer_->IdToToken(static_cast<int32_t>(id)));
  }

  int32_t TokenToId(val token) const {
    if (!token.isString()) Throw("Tokenizer.tokenToId: token must be a string", token);
    return tokenizer_->TokenToId(token.as<std::string>());
  }

  val SpecialIds() const {
    val ids = val::object();
    ids.set("pad", tokenizer_->PadId());
    ids.set("unk", tokenizer_->UnkId());
    ids.set("cls", tokenizer_->ClsId());
    ids.set("sep", tokenizer_->SepId());
    ids.set("mask", tokenizer_->MaskId());
    return ids;
  }

 private:
  const char* TryEncode(const val& text, val* result) const {
    if (!text.isString()) return Fail("Tokenizer.encode: text must be a string");
    // A lone UTF-16 surrogate has no UTF-8 form: it becomes U+FFFD, which is also one
    // UTF-16 unit, so offsets still index the caller's string.
    const val well_formed = text["toWellFormed"].isUndefined() ? text : text.call<val>("toWellFormed");
    Encoding encoding;
    if (tokenizer_->Encode(well_formed.as<std::string>(), &encoding) != Status::kOk) {
      return Fail("Tokenizer.encode: text is not valid Unicode (unpaired surrogate?)");
    }
    static_assert(sizeof(Span) == 2 * sizeof(uint32_t), "Span must be two packed uint32");
    *result = val::object();
    result->set("ids", NewTypedArray("Int32Array", encoding.ids.data(), encoding.ids.size()));
    result->set("offsets", NewTypedArray("Uint32Array", reinterpret_cast<const uint32_t*>(encoding.offsets.data()),
                                         2 * encoding.offsets.size()));
    result->set("maskPositions",
                NewTypedArray("Int32Array", encoding.mask_positions.data(), encoding.mask_positions.size()));
    result->set("truncatedTokens", encoding.truncated_tokens);
    val constraints = val::array();
    for (size_t i = 0; i < encoding.mask_constraints.size(); ++i) {
      const MaskConstraintText& typed = encoding.mask_constraints[i];
      if (!typed.present) {
        constraints.set(i, val::null());
        continue;
      }
      val constraint = val::object();
      constraint.set("text", typed.text);
      constraint.set("start", typed.span.start);
      constraint.set("end", typed.span.end);
      constraints.set(i, constraint);
    }
    result->set("maskConstraints", constraints);
    return nullptr;
  }

  std::unique_ptr<Tokenizer> tokenizer_;
};

const char* TryNewTokenizer(const val& vocab_bytes, const val& options, std::unique_ptr<Tokenizer>* out) {
  std::vector<char> bytes;
  if (const char* error = CopyTypedArray(vocab_bytes, "Uint8Array", "Tokenizer: vocabBytes", &bytes)) {
    return error;
  }
  TokenizerOptions parsed;
  OptionsReader reader(options, "TokenizerOptions");
  reader.Bool("cleanText", &parsed.clean_text);
  reader.Bool("handleChineseChars", &parsed.handle_chinese_chars);
  reader.Bool("stripAccents", &parsed.strip_accents);
  reader.Bool("lowercase", &parsed.lowercase);
  reader.Int("maxInputCharsPerWord", 1, 1 << 20, &parsed.max_input_chars_per_word);
  reader.Int("maxLength", 2, 1 << 30, &parsed.max_length);
  if (reader.error() != nullptr) return reader.error();
  std::string error;
  *out = Tokenizer::FromVocab(std::string_view(bytes.data(), bytes.size()), parsed, &error);
  if (*out == nullptr) return Fail("Tokenizer: invalid vocab: %s", error.c_str());
  return nullptr;
}

TokenizerHandle* NewTokenizer(val vocab_bytes, val options) {
  std::unique_ptr<Tokenizer> tokenizer;
  if (const char* error = TryNewTokenizer(vocab_bytes, options, &tokenizer)) {
    Throw(error, vocab_bytes, options);
  }
  return new TokenizerHandle(std::move(tokenizer));
}

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

const char* StatusName(MemoryStatus status) {
  switch (status) {
    case MemoryStatus::kOk:
      return "ok";
    case MemoryStatus::kTruncated:
      return "truncated";
    case MemoryStatus::kBadMagic:
      return "not-a-memory";
    case MemoryStatus::kBadVersion:
      return "wrong-version";
    case MemoryStatus::kCorrupt:
      return "corrupt";
    case MemoryStatus::kWrongVocab:
      return "wrong-vocab";
    case MemoryStatus::kMismatch:
      return "mismatch";
  }
  return "corrupt";
}

// Reads (ids, maskPositions, target) of a memory query; checks types and ranges only.
const char* ReadQuery(const char* where, const val& ids, const val& masks, double target, int32_t vocab,
                      std::vector<int32_t>* ids_out, std::vector<int32_t>* masks_out, size_t* target_out) {
  static std::string what_ids, what_masks;
  what_ids = std::string(where) + ": ids";
  what_masks = std::string(where) + ": maskPositions";
  if (const char* e = CopyTypedArray(ids, "Int32Array", what_ids.c_str(), ids_out)) return e;
  if (const char* e = CopyTypedArray(masks, "Int32Array", what_masks.c_str(), masks_out)) return e;
  for (size_t i = 0; i < ids_out->size(); ++i) {
    if ((*ids_out)[i] < 0 || (*ids_out)[i] >= vocab) return Fail("%s: ids[%zu] is not a token id", where, i);
  }
  for (size_t i = 0; i < masks_out->size(); ++i) {
    if ((*masks_out)[i] < 0 || static_cast<size_t>((*masks_out)[i]) >= ids_out->size()) {
      return Fail("%s: maskPositions[%zu] is not a position in ids", where, i);
    }
  }
  return ReadCount(target, (std::string(where) + ": target").c_str(),
                   masks_out->empty() ? 0 : static_cast<double>(masks_out->size() - 1), target_out);
}

class MemoryHandle {
 public:
  explicit MemoryHandle(std::unique_ptr<Memory> memory, int32_t vocab_size)
      : memory_(std::move(memory)), vocab_size_(vocab_size) {}

  const Memory& memory() const { return *memory_; }

  val Info() const {
    const MemoryInfo& info = memory_->Info();
    val out = val::object();
    out.set("version", info.version);
    out.set("maxOrder", info.max_order);
    out.set("ngrams", static_cast<double>(info.ngrams));
    out.set("ngramSlots", static_cast<double>(info.ngram_slots));
    out.set("texts", static_cast<double>(info.texts));
    out.set("idioms", static_cast<double>(info.idioms));
    out.set("units", static_cast<double>(info.units));
    out.set("bytes", static_cast<double>(info.bytes));
    out.set("build", info.build);
    return out;
  }

  val Propose(val ids, val masks, double target) {
    size_t t = 0;
    if (const char* error = ReadQuery("Memory.propose", ids, masks, target, vocab_size_, &ids_, &masks_, &t)) {
      Throw(error, ids, masks);
    }
    candidates_.clear();
    if (!masks_.empty()) {
      memory_->ProposeCandidates(ids_.data(), ids_.size(), masks_.data(), masks_.size(), t, &candidates_);
    }
    return NewTypedArray("Int32Array", candidates_.data(), candidates_.size());
  }

  val Evidence(val ids, val masks, double target, val candidates, double min_hit_strength) {
    val result = val::undefined();
    if (const char* error = TryEvidence(ids, masks, target, candidates, min_hit_strength, &result)) {
      Throw(error, ids, masks, candidates);
    }
    return result;
  }

  val Unigram() const {
    return NewTypedArray("Float32Array", memory_->UnigramLogProbs(), static_cast<size_t>(vocab_size_));
  }

  val Source(double text, double unit) const {
    if (!(text >= 0 && text < static_cast<double>(memory_->Info().texts)) || !(unit >= 0 && unit < 4294967296.0)) {
      Throw(Fail("Memory.source: no text %g", text));
    }
    const MemorySource source = memory_->SourceOf({static_cast<int32_t>(text), static_cast<uint32_t>(unit), 0, false});
    val out = val::object();
    out.set("work", source.work);
    out.set("title", source.title);
    out.set("author", source.author);
    out.set("text", source.text);
    out.set("pinyin", source.pinyin);
    out.set("reading", source.reading);
    return out;
  }

 private:
  const char* TryEvidence(const val& ids, const val& masks, double target, const val& candidates,
                          double min_hit_strength, val* result) {
    size_t t = 0, strength = 0;
    if (const char* e = ReadQuery("Memory.evidence", ids, masks, target, vocab_size_, &ids_, &masks_, &t)) return e;
    if (const char* e = CopyTypedArray(candidates, "Int32Array", "Memory.evidence: candidates", &candidates_)) return e;
    if (const char* e = ReadCount(min_hit_strength, "Memory.evidence: minHitStrength", 64, &strength)) return e;
    evidence_.clear();
    if (!masks_.empty()) {
      memory_->Evidence(ids_.data(), ids_.size(), masks_.data(), masks_.size(), t, candidates_.data(),
                        candidates_.size(), static_cast<int32_t>(strength), &evidence_);
    }
    const size_t n = evidence_.size();
    gains_.assign(n * 9, 0.0f);
    unigram_.resize(n);
    hit_text_.resize(n);
    hit_unit_.resize(n);
    hit_strength_.resize(n);
    hit_whole_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      std::copy(evidence_[i].ngram_gain, evidence_[i].ngram_gain + 9,
                gains_.begin() + static_cast<std::ptrdiff_t>(9 * i));
      unigram_[i] = evidence_[i].unigram;
      hit_text_[i] = evidence_[i].hit.text;
      hit_unit_[i] = evidence_[i].hit.unit;
      hit_strength_[i] = evidence_[i].hit.strength;
      hit_whole_[i] = evidence_[i].hit.whole;
    }
    *result = val::object();
    result->set("gains", NewTypedArray("Float32Array", gains_.data(), gains_.size()));
    result->set("unigram", NewTypedArray("Float32Array", unigram_.data(), n));
    result->set("hitText", NewTypedArray("Int32Array", hit_text_.data(), n));
    result->set("hitUnit", NewTypedArray("Uint32Array", hit_unit_.data(), n));
    result->set("hitStrength", NewTypedArray("Int32Array", hit_strength_.data(), n));
    result->set("hitWhole", NewTypedArray("Uint8Array", hit_whole_.data(), n));
    return nullptr;
  }

  std::unique_ptr<Memory> memory_;
  int32_t vocab_size_;
  std::vector<int32_t> ids_, masks_, candidates_;
  std::vector<CandidateEvidence> evidence_;
  std::vector<float> gains_, unigram_;
  std::vector<int32_t> hit_text_, hit_strength_;
  std::vector<uint32_t> hit_unit_;
  std::vector<uint8_t> hit_whole_;
};

// `ngram_bytes` undefined: one file (a whole memory, or a split memory's base alone).
const char* TryNewMemory(const val& bytes, const TokenizerHandle& tokenizer, const val& ngram_bytes,
                         std::unique_ptr<Memory>* out) {
  std::vector<uint8_t> data, ngrams;
  if (const char* error = CopyTypedArray(bytes, "Uint8Array", "Memory: bytes", &data)) return error;
  const bool split = !ngram_bytes.isUndefined();
  if (split) {
    if (const char* error = CopyTypedArray(ngram_bytes, "Uint8Array", "Memory: ngramBytes", &ngrams)) return error;
  }
  MemoryStatus status = MemoryStatus::kOk;
  std::string error;
  *out = split ? Memory::Load(std::move(data), std::move(ngrams), tokenizer.tokenizer(), &status, &error)
               : Memory::Load(std::move(data), tokenizer.tokenizer(), &status, &error);
  if (*out == nullptr) return Fail("Memory [%s]: %s", StatusName(status), error.c_str());
  return nullptr;
}

MemoryHandle* NewMemory(val bytes, const TokenizerHandle& tokenizer) {
  std::unique_ptr<Memory> memory;
  if (const char* error = TryNewMemory(bytes, tokenizer, val::undefined(), &memory)) Throw(error, bytes);
  return new MemoryHandle(std::move(memory), tokenizer.VocabSize());
}

MemoryHandle* NewSplitMemory(val bytes, const TokenizerHandle& tokenizer, val ngram_bytes) {
  std::unique_ptr<Memory> memory;
  if (const char* error = TryNewMemory(bytes, tokenizer, ngram_bytes, &memory)) Throw(error, bytes, ngram_bytes);
  return new MemoryHandle(std::move(memory), tokenizer.VocabSize());
}

// ---------------------------------------------------------------------------
// Output layer
// ---------------------------------------------------------------------------

class OutputLayerHandle {
 public:
  explicit OutputLayerHandle(std::unique_ptr<OutputLayer> layer) : layer_(std::move(layer)) {}

  int32_t HiddenSize() const { return layer_->HiddenSize(); }
  std::string DType() const { return layer_->DType(); }

  // Input embeddings of `ids`: Float32Array [ids.length * hiddenSize].
  val Embed(val ids) {
    val result = val::undefined();
    if (const char* error = TryEmbed(ids, &result)) Throw(error, ids);
    return result;
  }

  // Logits of `rows` hidden states: Float32Array [rows * vocabSize].
  val Logits(val hidden, double rows) {
    val result = val::undefined();
    if (const char* error = TryLogits(hidden, rows, &result)) Throw(error, hidden);
    return result;
  }

 private:
  const char* TryEmbed(const val& ids, val* result) {
    if (const char* e = CopyTypedArray(ids, "Int32Array", "OutputLayer.embed: ids", &ids_)) return e;
    floats_.resize(ids_.size() * static_cast<size_t>(layer_->HiddenSize()));
    if (!layer_->Embed(ids_.data(), ids_.size(), floats_.data()))
      return Fail("OutputLayer.embed: an id is outside the vocabulary");
    *result = NewTypedArray("Float32Array", floats_.data(), floats_.size());
    return nullptr;
  }

  const char* TryLogits(const val& hidden, double rows_arg, val* result) {
    size_t rows = 0;
    if (const char* e = ReadCount(rows_arg, "OutputLayer.logits: rows", 1 << 16, &rows)) return e;
    if (const char* e = CopyTypedArray(hidden, "Float32Array", "OutputLayer.logits: hidden", &hidden_)) return e;
    const size_t width = static_cast<size_t>(layer_->HiddenSize());
    if (hidden_.size() != rows * width) {
      return Fail("OutputLayer.logits: hidden has %zu values, expected rows x hiddenSize = %zu x %zu", hidden_.size(),
                  rows, width);
    }
    for (const float v : hidden_) {
      if (!std::isfinite(v)) return Fail("OutputLayer.logits: the hidden states are not finite");
    }
    floats_.resize(rows * static_cast<size_t>(layer_->VocabSize()));
    layer_->Logits(hidden_.data(), rows, floats_.data());
    *result = NewTypedArray("Float32Array", floats_.data(), floats_.size());
    return nullptr;
  }

  std::unique_ptr<OutputLayer> layer_;
  std::vector<int32_t> ids_;
  std::vector<float> hidden_, floats_;
};

OutputLayerHandle* NewOutputLayer(val bytes, double vocab_size) {
  std::unique_ptr<OutputLayer> layer;
  if (const char* error = [&]() -> const char* {
        std::vector<uint8_t> data;
        size_t vocab = 0;
        if (const char* e = CopyTypedArray(bytes, "Uint8Array", "OutputLayer: bytes", &data)) return e;
        if (const char* e = ReadCount(vocab_size, "OutputLayer: vocabSize", 1 << 24, &vocab)) return e;
        std::string message;
        layer = OutputLayer::Load(std::move(data), static_cast<int32_t>(vocab), &message);
        return layer ? nullptr : Fail("OutputLayer: %s", message.c_str());
      }()) {
    Throw(error, bytes);
  }
  return new OutputLayerHandle(std::move(layer));
}

// ---------------------------------------------------------------------------
// Decoder
// ---------------------------------------------------------------------------

// Names the first offending value of a row set that Decoder rejected as non-finite.
const char* DescribeNonFinite(const std::vector<float>& logits, size_t n_rows, size_t vocab) {
  for (size_t r = 0; r < n_rows; ++r) {
    const float* row = logits.data() + r * vocab;
    bool any_finite = false;
    for (size_t c = 0; c < vocab; ++c) {
      if (std::isnan(row[c]) || row[c] == INFINITY) {
        return Fail(
            "Decoder.decode: logits[row %zu, column %zu] is %s; logits must be finite "
            "(-Infinity is allowed and means probability 0)",
            r, c, std::isnan(row[c]) ? "NaN" : "+Infinity");
      }
      any_finite = any_finite || row[c] != -INFINITY;
    }
    if (!any_finite) {
      return Fail("Decoder.decode: logits row %zu is all -Infinity: no token has a probability", r);
    }
  }
  return Fail("Decoder.decode: logits are not finite");
}

class DecoderHandle {
 public:
  DecoderHandle(const Tokenizer& tokenizer, const DecodeOptions& options)
      : decoder_(tokenizer, options), vocab_size_(tokenizer.VocabSize()), fused_(options.memory != nullptr) {}

  // ids / maskPositions: the encoded input (required when the decoder fuses a memory).
  val Decode(val logits, double n_rows, double vocab_size, val ids, val masks) {
    return DecodeAllowed(std::move(logits), n_rows, vocab_size, std::move(ids), std::move(masks), val::undefined());
  }

  bool Eligible(double id) const {
    return id >= 0 && id < vocab_size_ && std::floor(id) == id && decoder_.Eligible(static_cast<int32_t>(id));
  }
  double EligibleCount() const { return static_cast<double>(decoder_.EligibleCount()); }

  // allowed: undefined, or per row null or a Uint8Array of vocabSize (the blank's constraint).
  val DecodeAllowed(val logits, double n_rows, double vocab_size, val ids, val masks, val allowed) {
    val result = val::undefined();
    if (const char* error = TryDecode(logits, n_rows, vocab_size, ids, masks, allowed, &result)) {
      Throw(error, logits, ids, masks, allowed);
    }
    return result;
  }

 private:
  const char* TryReadAllowed(const val& allowed, size_t n_rows) {
    allowed_rows_.assign(n_rows, {});
    allowed_pointers_.assign(n_rows, nullptr);
    if (allowed.isUndefined() || allowed.isNull()) return nullptr;
    if (!val::global("Array").call<bool>("isArray", allowed) || allowed["length"].as<size_t>() != n_rows) {
      return Fail("Decoder.decode: allowed must be an array with one entry per row (%zu)", n_rows);
    }
    for (size_t r = 0; r < n_rows; ++r) {
      const val row = allowed[r];
      if (row.isNull() || row.isUndefined()) continue;
      if (const char* error = CopyTypedArray(row, "Uint8Array", "Decoder.decode: allowed row", &allowed_rows_[r])) {
        return error;
      }
      if (allowed_rows_[r].size() != static_cast<size_t>(vocab_size_)) {
        return Fail("Decoder.decode: allowed[%zu] has %zu entries, expected vocabSize %d", r, allowed_rows_[r].size(),
                    vocab_size_);
      }
      allowed_pointers_[r] = allowed_rows_[r].data();
    }
    return nullptr;
  }

  const char* TryDecode(const val& logits, double n_rows_arg, double vocab_size_arg, const val& ids, const val& masks,
                        const val& allowed, val* result) {
    size_t n_rows = 0, vocab = 0;
    if (const char* error = ReadCount(n_rows_arg, "Decoder.decode: nRows", 1 << 16, &n_rows)) {
      return error;
    }
    if (const char* error = ReadCount(vocab_size_arg, "Decoder.decode: vocabSize", 1 << 24, &vocab)) {
      return error;
    }
    if (vocab != static_cast<size_t>(vocab_size_)) {
      return Fail("Decoder.decode: vocabSize is %zu but the tokenizer's vocabulary has %d tokens", vocab, vocab_size_);
    }
    if (const char* error = CopyTypedArray(logits, "Float32Array", "Decoder.decode: logits", &logits_)) {
      return error;
    }
    if (logits_.size() != n_rows * vocab) {
      return Fail("Decoder.decode: logits has %zu values, expected nRows x vocabSize = %zu x %zu = %zu", logits_.size(),
                  n_rows, vocab, n_rows * vocab);
    }
    MaskContext context;
    if (fused_) {
      size_t target = 0;
      if (const char* e = ReadQuery("Decoder.decode", ids, masks, 0, vocab_size_, &ids_in_, &masks_in_, &target)) {
        return e;
      }
      if (masks_in_.size() != n_rows) {
        return Fail("Decoder.decode: %zu maskPositions for %zu rows of logits", masks_in_.size(), n_rows);
      }
      context = {ids_in_.data(), ids_in_.size(), masks_in_.data(), masks_in_.size()};
    }
    if (const char* error = TryReadAllowed(allowed, n_rows)) return error;
    context.allowed = allowed_pointers_.data();
    switch (decoder_.Decode(logits_.data(), n_rows, vocab, context, &rows_)) {
      case DecodeStatus::kOk:
        break;
      case DecodeStatus::kNonFinite:
        return DescribeNonFinite(logits_, n_rows, vocab);
      case DecodeStatus::kBadShape:
        return Fail("Decoder.decode: bad logits shape");
    }
    *result = val::array();
    for (size_t r = 0; r < rows_.size(); ++r) {
      ids_.clear();
      probabilities_.clear();
      hit_text_.clear();
      hit_unit_.clear();
      for (const Candidate& candidate : rows_[r].candidates) {
        ids_.push_back(candidate.id);
        probabilities_.push_back(candidate.probability);
        hit_text_.push_back(candidate.hit.text);
        hit_unit_.push_back(candidate.hit.unit);
      }
      val row = val::object();
      row.set("ids", NewTypedArray("Int32Array", ids_.data(), ids_.size()));
      row.set("probabilities", NewTypedArray("Float32Array", probabilities_.data(), probabilities_.size()));
      row.set("other", rows_[r].other);
      if (fused_) {
        row.set("hitText", NewTypedArray("Int32Array", hit_text_.data(), hit_text_.size()));
        row.set("hitUnit", NewTypedArray("Uint32Array", hit_unit_.data(), hit_unit_.size()));
      }
      result->set(r, row);
    }
    return nullptr;
  }

  Decoder decoder_;
  int32_t vocab_size_;
  bool fused_;
  std::vector<int32_t> ids_in_, masks_in_, hit_text_;
  std::vector<std::vector<uint8_t>> allowed_rows_;
  std::vector<const uint8_t*> allowed_pointers_;
  std::vector<uint32_t> hit_unit_;
  // Scratch reused across calls (also keeps the error path free of owning locals).
  std::vector<float> logits_;
  std::vector<Decoded> rows_;
  std::vector<int32_t> ids_;
  std::vector<float> probabilities_;
};

const char* TryReadFusion(const val& fusion, FusionWeights* out) {
  OptionsReader reader(fusion, "DecodeOptions.fusion");
  std::vector<float> ngram;
  reader.Number("model", 0.0f, 100.0f, &out->model);
  reader.Number("unigram", -100.0f, 100.0f, &out->unigram);
  reader.Floats("ngram", &ngram);
  reader.Number("hitBase", -100.0f, 100.0f, &out->hit_base);
  reader.Number("hitPerToken", -100.0f, 100.0f, &out->hit_per_token);
  reader.Number("hitWhole", -100.0f, 100.0f, &out->hit_whole);
  reader.Int("minHitStrength", 1, 64, &out->min_hit_strength);
  reader.Int("modelCandidates", 0, 4096, &out->model_candidates);
  reader.Number("floor", 0.0f, 0.5f, &out->floor);
  if (reader.error() != nullptr) return reader.error();
  if (!ngram.empty()) {
    if (ngram.size() != 9) return Fail("DecodeOptions.fusion.ngram must have 9 entries (n-gram lengths 0..8)");
    std::copy(ngram.begin(), ngram.end(), out->ngram);
  }
  return nullptr;
}

const char* TryReadDecodeOptions(const val& options, int32_t vocab_size, DecodeOptions* out) {
  OptionsReader reader(options, "DecodeOptions");
  reader.Int("topK", 1, vocab_size, &out->top_k);
  reader.Number("threshold", 0.0f, 1.0f, &out->threshold);
  reader.Bool("excludeSpecial", &out->exclude_special);
  reader.Bool("excludeSubwords", &out->exclude_subwords);
  reader.Ids("allowIds", vocab_size, &out->allow_ids);
  reader.Ids("denyIds", vocab_size, &out->deny_ids);
  if (reader.error() != nullptr) return reader.error();
  if (options.isUndefined() || options.isNull()) return nullptr;
  const val memory = options["memory"];
  if (!memory.isUndefined() && !memory.isNull()) {
    if (!memory.instanceof (val::module_property("Memory"))) return Fail("DecodeOptions.memory must be a Memory");
    out->memory = &memory.as<MemoryHandle*>(emscripten::allow_raw_pointers())->memory();
  }
  return TryReadFusion(options["fusion"], &out->fusion);
}

DecoderHandle* NewDecoder(const TokenizerHandle& tokenizer, val options) {
  DecoderHandle* decoder = nullptr;
  if (const char* error = [&]() -> const char* {
        DecodeOptions parsed;
        if (const char* e = TryReadDecodeOptions(options, tokenizer.VocabSize(), &parsed)) return e;
        decoder = new DecoderHandle(tokenizer.tokenizer(), parsed);
        return nullptr;
      }()) {
    Throw(error, options);
  }
  return decoder;
}

// ---------------------------------------------------------------------------
// Fingerprint cache
// ---------------------------------------------------------------------------

class CacheHandle {
 public:
  CacheHandle(size_t max_entries, size_t max_bytes) : cache_(max_entries, max_bytes) {}

  val Get(val ids, val mask_positions, val fingerprint) {
    if (const char* error = TryMakeKey("FingerprintCache.get", ids, mask_positions, fingerprint)) {
      Throw(error, ids, mask_positions, fingerprint);
    }
    return cache_.Get(key_, &value_) ? val(value_) : val::undefined();
  }

  void Put(val ids, val mask_positions, val fingerprint, val value) {
    const char* error = TryMakeKey("FingerprintCache.put", ids, mask_positions, fingerprint);
    if (error == nullptr && !value.isString()) error = "FingerprintCache.put: value must be a string";
    if (error != nullptr) Throw(error, ids, mask_positions, fingerprint, value);
    cache_.Put(key_, value.as<std::string>());
  }

  void Clear() { cache_.Clear(); }

  val Stats() const {
    const CacheStats stats = cache_.Stats();
    val out = val::object();
    out.set("hits", static_cast<double>(stats.hits));
    out.set("misses", static_cast<double>(stats.misses));
    out.set("evictions", static_cast<double>(stats.evictions));
    out.set("entries", static_cast<double>(stats.entries));
    out.set("bytes", static_cast<double>(stats.bytes));
    out.set("maxEntries", static_cast<double>(stats.max_entries));
    out.set("maxBytes", static_cast<double>(stats.max_bytes));
    return out;
  }

 private:
  const char* TryMakeKey(const char* where, const val& ids, const val& mask_positions, const val& fingerprint) {
    const std::string ids_what = std::string(where) + ": ids";
    const std::string masks_what = std::string(where) + ": maskPositions";
    if (const char* error = CopyTypedArray(ids, "Int32Array", ids_what.c_str(), &ids_)) return error;
    if (const char* error = CopyTypedArray(mask_positions, "Int32Array", masks_what.c_str(), &masks_)) {
      return error;
    }
    if (!fingerprint.isString()) return Fail("%s: optionsFingerprint must be a string", where);
    key_ = FingerprintCache::MakeKey(ids_, masks_, fingerprint.as<std::string>());
    return nullptr;
  }

  FingerprintCache cache_;
  std::vector<int32_t> ids_, masks_;
  std::string key_, value_;
};

CacheHandle* NewCache(double max_entries, double max_bytes) {
  size_t entries = 0, bytes = 0;
  // Half the heap this build can ever have (fixed in the threaded build), so a full
  // cache cannot starve the tokenizer and decoder.
  const double max_cache_bytes = static_cast<double>(emscripten_get_heap_max() / 2);
  const char* error = ReadCount(max_entries, "FingerprintCache: maxEntries", 1e9, &entries);
  if (error == nullptr) error = ReadCount(max_bytes, "FingerprintCache: maxBytes", max_cache_bytes, &bytes);
  if (error != nullptr) Throw(error);
  return new CacheHandle(entries, bytes);
}

// ---------------------------------------------------------------------------

// The wasm heap's current size (it grows, never shrinks): for memory reports.
double HeapBytes() { return static_cast<double>(emscripten_get_heap_size()); }

val BuildInfo() {
  val info = val::object();
#ifdef __EMSCRIPTEN_PTHREADS__
  info.set("threads", true);
#else
  info.set("threads", false);
#endif
#ifdef __wasm_simd128__
  info.set("simd", true);
#else
  info.set("simd", false);
#endif
  info.set("version", std::string(TK_VERSION));
  return info;
}

// ---------------------------------------------------------------------------
// Pinyin
// ---------------------------------------------------------------------------

// { display, allowed: Uint8Array(vocabSize), count } for a constraint the user typed, or
// { error } with the core's message (a user mistake, reported with the blank by the caller).
val SoundConstraintFor(const TokenizerHandle& tokenizer, val text) {
  if (!text.isString()) Throw("soundConstraint: text must be a string", text);
  SoundConstraint constraint;
  std::string error;
  val result = val::object();
  if (!ParseSoundConstraint(text.as<std::string>(), &constraint, &error)) {
    result.set("error", error);
    return result;
  }
  const std::vector<uint8_t> allowed = SoundEligibility(tokenizer.tokenizer(), constraint);
  size_t count = 0;
  for (const uint8_t a : allowed) count += a;
  result.set("display", FormatSoundConstraint(constraint));
  result.set("allowed", NewTypedArray("Uint8Array", allowed.data(), allowed.size()));
  result.set("count", count);
  return result;
}

// [{ start, end, readings: string[], tones: Int8Array, standard: Uint8Array, classes: Uint8Array }] for each character
// of `text` with readings; `prefer`: undefined, or a constraint (as soundConstraint takes it) whose readings come
// first. Reads readingsOf's `prefer` (its locals are gone before the caller may throw).
const char* TryReadPrefer(const val& prefer, SoundConstraint* out, bool* constrained) {
  *constrained = false;
  if (prefer.isUndefined() || prefer.isNull()) return nullptr;
  std::string error;
  if (!prefer.isString() || !ParseSoundConstraint(prefer.as<std::string>(), out, &error)) {
    return "readingsOf: prefer must be a sound constraint such as \"shang4\" or \"平\"";
  }
  *constrained = true;
  return nullptr;
}

val ReadingsOfTextFor(val text, bool marks, val prefer) {
  if (!text.isString()) Throw("readingsOf: text must be a string", text, prefer);
  SoundConstraint constraint;
  bool constrained = false;
  if (const char* error = TryReadPrefer(prefer, &constraint, &constrained)) Throw(error, text, prefer);
  const std::vector<CharReadings> readings =
      ReadingsOfText(text.as<std::string>(), marks, constrained ? &constraint : nullptr);
  val result = val::array();
  for (size_t i = 0; i < readings.size(); ++i) {
    val entry = val::object();
    entry.set("start", readings[i].span.start);
    entry.set("end", readings[i].span.end);
    val spelled = val::array();
    for (size_t r = 0; r < readings[i].readings.size(); ++r) spelled.set(r, readings[i].readings[r]);
    entry.set("readings", spelled);
    entry.set("tones", NewTypedArray("Int8Array", readings[i].tones.data(), readings[i].tones.size()));
    entry.set("standard", NewTypedArray("Uint8Array", readings[i].standard.data(), readings[i].standard.size()));
    entry.set("classes", NewTypedArray("Uint8Array", readings[i].classes.data(), readings[i].classes.size()));
    result.set(i, entry);
  }
  return result;
}

// ---------------------------------------------------------------------------
// ConfusionSets
// ---------------------------------------------------------------------------

class ConfusionSetsHandle {
 public:
  explicit ConfusionSetsHandle(const TokenizerHandle& tokenizer) : sets_(tokenizer.tokenizer()) {}

  // { ids: Int32Array, kinds: Uint8Array } (1 sound, 2 near-sound, 3 shape), ConfusionSets::Of.
  val Of(double id) const {
    if (!std::isfinite(id) || std::floor(id) != id) Throw(Fail("ConfusionSets.of: %g is not a token id", id));
    std::vector<Confusion> confusions;
    if (id >= 0 && id <= 2147483647.0) confusions = sets_.Of(static_cast<int32_t>(id));
    std::vector<int32_t> ids(confusions.size());
    std::vector<uint8_t> kinds(confusions.size());
    for (size_t i = 0; i < confusions.size(); ++i) {
      ids[i] = confusions[i].id;
      kinds[i] = static_cast<uint8_t>(confusions[i].kind);
    }
    val result = val::object();
    result.set("ids", NewTypedArray("Int32Array", ids.data(), ids.size()));
    result.set("kinds", NewTypedArray("Uint8Array", kinds.data(), kinds.size()));
    return result;
  }

 private:
  ConfusionSets sets_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(tiankong_core) {
  emscripten::class_<TokenizerHandle>("Tokenizer")
      .constructor(&NewTokenizer)
      .function("encode", &TokenizerHandle::Encode)
      .function("vocabSize", &TokenizerHandle::VocabSize)
      .function("idToToken", &TokenizerHandle::IdToToken)
      .function("tokenToId", &TokenizerHandle::TokenToId)
      .function("specialIds", &TokenizerHandle::SpecialIds);

  emscripten::class_<MemoryHandle>("Memory")
      .constructor(&NewMemory, emscripten::allow_raw_pointers())
      .constructor(&NewSplitMemory, emscripten::allow_raw_pointers())
      .function("info", &MemoryHandle::Info)
      .function("propose", &MemoryHandle::Propose)
      .function("evidence", &MemoryHandle::Evidence)
      .function("source", &MemoryHandle::Source)
      .function("unigram", &MemoryHandle::Unigram);

  emscripten::class_<OutputLayerHandle>("OutputLayer")
      .constructor(&NewOutputLayer, emscripten::allow_raw_pointers())
      .function("hiddenSize", &OutputLayerHandle::HiddenSize)
      .function("dtype", &OutputLayerHandle::DType)
      .function("embed", &OutputLayerHandle::Embed)
      .function("logits", &OutputLayerHandle::Logits);

  // decode takes 5 arguments, or 6 with the rows' `allowed` tokens (Embind overloads by count).
  emscripten::class_<DecoderHandle>("Decoder")
      .constructor(&NewDecoder)
      .function("decode", &DecoderHandle::Decode)
      .function("decode", &DecoderHandle::DecodeAllowed)
      .function("eligible", &DecoderHandle::Eligible)
      .function("eligibleCount", &DecoderHandle::EligibleCount);

  emscripten::class_<CacheHandle>("FingerprintCache")
      .constructor(&NewCache)
      .function("get", &CacheHandle::Get)
      .function("put", &CacheHandle::Put)
      .function("clear", &CacheHandle::Clear)
      .function("stats", &CacheHandle::Stats);

  emscripten::class_<ConfusionSetsHandle>("ConfusionSets")
      .constructor<const TokenizerHandle&>()
      .function("of", &ConfusionSetsHandle::Of);

  emscripten::function("soundConstraint", &SoundConstraintFor);
  emscripten::function("readingsOf", &ReadingsOfTextFor);
  emscripten::function("buildInfo", &BuildInfo);
  emscripten::function("heapBytes", &HeapBytes);
}

}  // namespace bindings
}  // namespace tiankong
