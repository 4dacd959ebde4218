// Strict UTF-8 decoding into code points that remember where they came from, in the
// UTF-16 code units JavaScript counts (the unit of every offset in the public API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tiankong/tiankong.h"

namespace tiankong {
namespace text {

// A code point and the span of the original input it stands for. Later stages keep the
// source span when they rewrite or expand a character, so offsets survive normalization.
struct AlignedChar {
  char32_t cp;
  Span source;
};

// Decodes `bytes` as strict UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF, no truncated sequences) and appends one AlignedChar per code point to
// *out, with its UTF-16 span counted from the start of `bytes`. Returns false on the first
// invalid sequence and stores its byte offset in *error_offset; *out then holds the
// characters decoded before it.
bool DecodeUtf8(std::string_view bytes, std::vector<AlignedChar>* out, size_t* error_offset);

// Appends the UTF-8 encoding of `cp` (a Unicode scalar value) to *out.
void AppendUtf8(char32_t cp, std::string* out);

}  // namespace text
}  // namespace tiankong
