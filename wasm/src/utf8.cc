#include "utf8.h"

namespace tiankong {
namespace text {

bool DecodeUtf8(std::string_view bytes, std::vector<AlignedChar>* out, size_t* error_offset) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  out->reserve(out->size() + n);
  uint32_t utf16 = 0;
  size_t i = 0;
  while (i < n) {
    const unsigned char lead = s[i];
    if (lead < 0x80) {  // ASCII fast path: the bulk of markup, digits and Latin text
      out->push_back({lead, {utf16, utf16 + 1}});
      ++utf16;
      ++i;
      continue;
    }
    // Table 3-7 of the Unicode standard: the lead byte fixes the length and the valid
    // range of the second byte (which excludes overlongs, surrogates and > U+10FFFF).
    size_t length;
    char32_t cp;
    unsigned char second_min = 0x80, second_max = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
      cp = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      cp = lead & 0x0F;
      if (lead == 0xE0) second_min = 0xA0;
      if (lead == 0xED) second_max = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      cp = lead & 0x07;
      if (lead == 0xF0) second_min = 0x90;
      if (lead == 0xF4) second_max = 0x8F;
    } else {
      *error_offset = i;
      return false;
    }
    if (i + length > n || s[i + 1] < second_min || s[i + 1] > second_max) {
      *error_offset = i;
      return false;
    }
    for (size_t k = 1; k < length; ++k) {
      if (k > 1 && (s[i + k] & 0xC0) != 0x80) {
        *error_offset = i;
        return false;
      }
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    const uint32_t units = cp >= 0x10000 ? 2 : 1;
    out->push_back({cp, {utf16, utf16 + units}});
    utf16 += units;
    i += length;
  }
  return true;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace text
}  // namespace tiankong
