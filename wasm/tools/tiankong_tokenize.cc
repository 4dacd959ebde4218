// tiankong_tokenize: the native BERT tokenizer on the command line (tests, parity checks,
// benchmarks). Usage:
//   tiankong_tokenize --vocab PATH [--json] [options] [TEXT...]
// Tokenizes each TEXT argument, or each line of stdin ('\n'-separated) when there is none.
// --json prints one object per input: {"tokens":[...],"ids":[...],"offsets":[[s,e],...],
// "truncated_tokens":N}; offsets are UTF-16 code units of the input. An input that is not
// valid UTF-8 is reported on stderr (and as {"error":"invalid UTF-8"} under --json, so output
// lines stay aligned with input lines); the tool goes on and exits with status 2 at the end.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tiankong/tiankong.h"

namespace {

constexpr int kExitUsage = 64;  // sysexits.h EX_USAGE
constexpr int kExitInvalidInput = 2;

const char kUsage[] =
    "usage: tiankong_tokenize --vocab PATH [--json] [options] [TEXT...]\n"
    "Tokenizes each TEXT, or each stdin line when no TEXT is given.\n"
    "  --vocab PATH           BERT vocab.txt (required)\n"
    "  --json                 one JSON object per input: tokens, ids, offsets (UTF-16)\n"
    "  --lowercase            lowercase (and strip accents, unless --keep-accents)\n"
    "  --strip-accents        NFD + drop non-spacing marks\n"
    "  --keep-accents         with --lowercase: do not strip accents\n"
    "  --no-clean-text        keep control characters\n"
    "  --no-chinese-chars     do not split CJK ideographs apart\n"
    "  --max-length N         truncate to N tokens including [CLS]/[SEP] (default 512)\n";

void AppendJsonString(const std::string& s, std::string* out) {
  out->push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(ch);
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out->append(escaped);
    } else {
      out->push_back(ch);
    }
  }
  out->push_back('"');
}

std::string ToJson(const tiankong::Encoding& e) {
  std::string out = "{\"tokens\":[";
  for (size_t i = 0; i < e.tokens.size(); ++i) {
    if (i) out.push_back(',');
    AppendJsonString(e.tokens[i], &out);
  }
  out += "],\"ids\":[";
  for (size_t i = 0; i < e.ids.size(); ++i) {
    if (i) out.push_back(',');
    out += std::to_string(e.ids[i]);
  }
  out += "],\"offsets\":[";
  for (size_t i = 0; i < e.offsets.size(); ++i) {
    if (i) out.push_back(',');
    out += "[" + std::to_string(e.offsets[i].start) + "," + std::to_string(e.offsets[i].end) + "]";
  }
  out += "],\"truncated_tokens\":" + std::to_string(e.truncated_tokens) + "}";
  return out;
}

std::string ToTable(const tiankong::Encoding& e) {
  std::ostringstream out;
  for (size_t i = 0; i < e.ids.size(); ++i) {
    out << "  " << i << "\t" << e.ids[i] << "\t" << e.tokens[i] << "\t[" << e.offsets[i].start << ","
        << e.offsets[i].end << ")\n";
  }
  if (e.truncated_tokens) out << "  (truncated: " << e.truncated_tokens << " tokens dropped)\n";
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string vocab_path;
  bool json = false, keep_accents = false, strip_accents = false;
  tiankong::TokenizerOptions options;
  std::vector<std::string> texts;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--vocab" && i + 1 < argc) {
      vocab_path = argv[++i];
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--lowercase") {
      options.lowercase = true;
    } else if (arg == "--strip-accents") {
      strip_accents = true;
    } else if (arg == "--keep-accents") {
      keep_accents = true;
    } else if (arg == "--no-clean-text") {
      options.clean_text = false;
    } else if (arg == "--no-chinese-chars") {
      options.handle_chinese_chars = false;
    } else if (arg == "--max-length" && i + 1 < argc) {
      char* end;
      const long n = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 2 || n > (1L << 30)) {
        std::cerr << "tiankong_tokenize: --max-length needs a whole number >= 2, got '" << argv[i] << "'\n";
        return kExitUsage;
      }
      options.max_length = static_cast<int>(n);
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg.rfind("--", 0) == 0) {
      std::cerr << "tiankong_tokenize: unknown or incomplete option '" << arg << "'\n" << kUsage;
      return kExitUsage;
    } else {
      texts.push_back(arg);
    }
  }
  if (vocab_path.empty()) {
    std::cerr << "tiankong_tokenize: --vocab PATH is required\n" << kUsage;
    return kExitUsage;
  }
  // HF: strip_accents=None follows lowercase.
  options.strip_accents = strip_accents || (options.lowercase && !keep_accents);

  std::ifstream vocab_file(vocab_path, std::ios::binary);
  if (!vocab_file) {
    std::cerr << "tiankong_tokenize: cannot read vocab '" << vocab_path << "'\n";
    return kExitUsage;
  }
  const std::string vocab_bytes((std::istreambuf_iterator<char>(vocab_file)), std::istreambuf_iterator<char>());
  std::string error;
  const auto tokenizer = tiankong::Tokenizer::FromVocab(vocab_bytes, options, &error);
  if (!tokenizer) {
    std::cerr << "tiankong_tokenize: " << vocab_path << ": " << error << "\n";
    return kExitUsage;
  }

  std::ios::sync_with_stdio(false);
  int status = 0;
  size_t input_number = 0;
  tiankong::Encoding encoding;
  auto tokenize = [&](const std::string& text) {
    ++input_number;
    if (tokenizer->Encode(text, &encoding) != tiankong::Status::kOk) {
      std::cerr << "tiankong_tokenize: input " << input_number << " is not valid UTF-8; skipped\n";
      if (json) std::cout << "{\"error\":\"invalid UTF-8\"}\n";
      status = kExitInvalidInput;
      return;
    }
    if (json) {
      std::cout << ToJson(encoding) << '\n';
    } else {
      std::cout << text << '\n' << ToTable(encoding);
    }
  };
  if (!texts.empty()) {
    for (const std::string& text : texts) tokenize(text);
  } else {
    std::string line;
    while (std::getline(std::cin, line)) tokenize(line);
  }
  std::cout.flush();
  return status;
}
