// libFuzzer target: the tokenizer on arbitrary bytes (build with the `fuzz` preset: clang,
// ASan + UBSan; run with scripts/fuzz). Besides "no crash, no UB", every encoding must hold:
// - Encode succeeds exactly when the input is valid UTF-8 (checked by a separate validator);
// - [CLS] first, [SEP] last, ids in range, tokens[i] is the token of ids[i];
// - offsets lie within the input's UTF-16 length, each content token covers a non-empty
//   span, and spans follow each other without overlapping;
// - mask_positions list exactly the [MASK] ids; at most max_length ids.
// Vocab: $TK_FUZZ_VOCAB, else bert-base-chinese from the shared data, else a tiny built-in one.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "tiankong/tiankong.h"

namespace {

const tiankong::Tokenizer* g_tokenizer = nullptr;

constexpr char kFallbackVocab[] =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n##a\nb\n##b\n\xE4\xB8\xAD\n##\xE4\xB8\xAD\n,\n.\n";

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return {};
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

// Independent strict UTF-8 check (code-point arithmetic, not the tokenizer's byte-range
// tables); returns the UTF-16 length, or -1 if invalid.
long Utf16LengthIfValid(const uint8_t* s, size_t n) {
  long units = 0;
  for (size_t i = 0; i < n;) {
    int length = s[i] < 0x80 ? 1 : (s[i] >> 5) == 0x6 ? 2 : (s[i] >> 4) == 0xE ? 3 : (s[i] >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > n) return -1;
    uint32_t cp = length == 1 ? s[i] : s[i] & (0x7F >> length);
    for (int k = 1; k < length; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return -1;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    const uint32_t min_for_length[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_length[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    units += cp >= 0x10000 ? 2 : 1;
    i += length;
  }
  return units;
}

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "invariant violated: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::string vocab;
  if (const char* path = std::getenv("TK_FUZZ_VOCAB")) vocab = ReadFile(path);
  if (vocab.empty()) {
    const std::string source = __FILE__;  // <repo>/wasm/fuzz/tokenizer_fuzz.cc
    vocab =
        ReadFile(source.substr(0, source.rfind("/wasm/fuzz/")) + "/../shared/data/vocab/bert-base-chinese/vocab.txt");
  }
  if (vocab.empty()) vocab = kFallbackVocab;
  std::string error;
  static std::unique_ptr<tiankong::Tokenizer> tokenizer =
      tiankong::Tokenizer::FromVocab(vocab, tiankong::TokenizerOptions{}, &error);
  if (!tokenizer) {
    std::fprintf(stderr, "tokenizer_fuzz: bad vocab: %s\n", error.c_str());
    std::abort();
  }
  g_tokenizer = tokenizer.get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tiankong::Tokenizer& t = *g_tokenizer;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tiankong::Encoding e;
  const tiankong::Status status = t.Encode(text, &e);
  const long utf16_length = Utf16LengthIfValid(data, size);
  if (utf16_length < 0) {
    if (status != tiankong::Status::kInvalidUtf8) Fail("invalid UTF-8 accepted");
    if (!e.ids.empty() || !e.tokens.empty() || !e.offsets.empty()) Fail("output after invalid UTF-8");
    return 0;
  }
  if (status != tiankong::Status::kOk) Fail("valid UTF-8 rejected");
  const size_t n = e.ids.size();
  if (n < 2 || e.tokens.size() != n || e.offsets.size() != n) Fail("sizes");
  if (e.ids.front() != t.ClsId() || e.ids.back() != t.SepId()) Fail("[CLS] ... [SEP]");
  if (n > static_cast<size_t>(tiankong::TokenizerOptions{}.max_length)) Fail("max_length");
  size_t masks = 0;
  uint32_t previous_end = 0;
  for (size_t i = 0; i < n; ++i) {
    if (e.ids[i] < 0 || e.ids[i] >= t.VocabSize()) Fail("id out of range");
    if (e.tokens[i] != t.IdToToken(e.ids[i])) Fail("token does not match id");
    if (e.ids[i] == t.MaskId() &&
        (masks >= e.mask_positions.size() || e.mask_positions[masks++] != static_cast<int32_t>(i)))
      Fail("mask_positions");
    const tiankong::Span span = e.offsets[i];
    if (i == 0 || i == n - 1) {
      if (span.start != 0 || span.end != 0) Fail("[CLS]/[SEP] offsets");
      continue;
    }
    if (span.start >= span.end) Fail("empty span");
    if (span.end > static_cast<uint32_t>(utf16_length)) Fail("span beyond input");
    if (span.start < previous_end) Fail("spans overlap or go back");
    previous_end = span.end;
  }
  if (masks != e.mask_positions.size()) Fail("mask_positions count");
  return 0;
}
