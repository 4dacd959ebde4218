// tiankong_pinyin: the core's pinyin table on the command line (tests compare it with an
// independent parse of Unihan). Usage:
//   tiankong_pinyin --dump            every character with readings: "U+XXXX<TAB>shang4 shang3 ...",
//                                     a reading that is not standard marked "*" ("fou3*")
//   tiankong_pinyin TEXT...           each character of each TEXT with its readings (tone marks)
#include <cstdio>
#include <string>
#include <string_view>

#include "pinyin.h"

namespace {

// Decodes one UTF-8 scalar at s[*i] (advances *i); U+FFFD for a malformed sequence.
char32_t NextCodePoint(std::string_view s, size_t* i) {
  unsigned char b = static_cast<unsigned char>(s[*i]);
  int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
  if (n == 0 || *i + n > s.size()) {
    ++*i;
    return 0xFFFD;
  }
  char32_t c = n == 1 ? b : b & (0x7F >> n);
  for (int k = 1; k < n; ++k) c = (c << 6) | (static_cast<unsigned char>(s[*i + k]) & 0x3F);
  *i += n;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  using tiankong::pinyin::Format;
  using tiankong::pinyin::ReadingsOf;
  if (argc == 2 && std::string_view(argv[1]) == "--dump") {
    for (char32_t c = 0; c <= 0x10FFFF; ++c) {
      auto readings = ReadingsOf(c);
      if (readings.empty()) continue;
      std::printf("U+%04X\t", static_cast<unsigned>(c));
      for (size_t r = 0; r < readings.size(); ++r) {
        std::printf("%s%s%s", r ? " " : "", Format(readings[r], false).c_str(), readings[r].standard ? "" : "*");
      }
      std::printf("\n");
    }
    return 0;
  }
  if (argc < 2) {
    std::fprintf(stderr, "usage: tiankong_pinyin --dump | TEXT...\n");
    return 64;
  }
  for (int a = 1; a < argc; ++a) {
    std::string_view text = argv[a];
    for (size_t i = 0; i < text.size();) {
      size_t start = i;
      auto readings = ReadingsOf(NextCodePoint(text, &i));
      std::printf("%.*s", static_cast<int>(i - start), text.data() + start);
      for (size_t r = 0; r < readings.size(); ++r) std::printf("%s%s", r ? "," : " ", Format(readings[r]).c_str());
      std::printf("\n");
    }
  }
  return 0;
}
