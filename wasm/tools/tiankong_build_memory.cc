// tiankong_build_memory: builds a memory.bin (the corpus memory of a model) from corpus lines and a
// list of famous texts and idioms. scripts/build-memory drives it. Usage:
//   tiankong_build_memory --vocab VOCAB --corpus LINES.txt --texts TEXTS.tsv --out memory.bin [options]
//   tiankong_build_memory --split WHOLE.bin --out memory.bin --ngrams-out memory-ngrams.bin
// TEXTS.tsv: one text per line, tab-separated: kind (famous|idiom), work, title, author, text, and
// optionally the text's reading (syllables separated by spaces: the idiom dictionary's pinyin).
// --ngrams-out (or --split, for a memory already built) writes the memory in two parts
// (memory::SplitNgrams): what a first answer needs, and the longer n-grams.
// Outputs are written to OUT.tmp and renamed, so an interrupted build never leaves a broken file.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "memory_builder.h"
#include "tiankong/tiankong.h"

namespace {

constexpr int kExitUsage = 64;  // sysexits.h EX_USAGE
constexpr int kExitFailed = 1;

const char kUsage[] =
    "usage: tiankong_build_memory --vocab PATH --corpus PATH --texts PATH --out PATH [options]\n"
    "       tiankong_build_memory --split PATH --out PATH --ngrams-out PATH\n"
    "  --vocab PATH        the model's vocab.txt\n"
    "  --corpus PATH       training text, one line per text\n"
    "  --texts PATH        famous texts and idioms (TSV: kind, work, title, author, text[, pinyin])\n"
    "  --weights PATH      one whole number 1..255 per corpus line: how much its counts weigh\n"
    "  --out PATH          memory.bin to write\n"
    "  --ngrams-out PATH   write the longer n-grams to this second file (a split memory)\n"
    "  --split PATH        split this whole memory.bin into --out and --ngrams-out (no build)\n"
    "  --order N           longest n-gram (2..8, default 5)\n"
    "  --min-count N       n-grams seen fewer times are dropped (default 2)\n"
    "  --max-ngrams N      n-grams kept, the most useful first (default 1500000)\n"
    "  --count-exponent X  usefulness ranking: count^X * |log-prob change| (default 1; lower keeps\n"
    "                      more long n-grams)\n"
    "  --lowercase         the model's tokenizer lowercases (and strips accents)\n"
    "  --description JSON  a JSON value recorded in the file's build info (e.g. input names)\n";

bool ReadWhole(const std::string& path, std::string* out) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  std::ostringstream buffer;
  buffer << file.rdbuf();
  *out = buffer.str();
  return true;
}

bool ParseCount(const char* text, long min, long max, long* out) {
  char* end;
  *out = std::strtol(text, &end, 10);
  return *end == '\0' && *out >= min && *out <= max;
}

// Writes `bytes` to path.tmp and renames it over `path`; false (message printed) on failure.
bool WriteAtomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) {
      std::cerr << "tiankong_build_memory: cannot write '" << tmp << "'\n";
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::cerr << "tiankong_build_memory: cannot rename '" << tmp << "' to '" << path << "'\n";
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

// Writes the whole memory to `out_path`, or split in two when `ngrams_path` is given.
bool WriteMemory(const std::vector<uint8_t>& whole, const std::string& out_path, const std::string& ngrams_path) {
  if (ngrams_path.empty()) return WriteAtomically(out_path, whole);
  std::vector<uint8_t> base, ngrams;
  std::string error;
  if (!tiankong::memory::SplitNgrams(whole.data(), whole.size(), &base, &ngrams, &error)) {
    std::cerr << "tiankong_build_memory: cannot split the memory: " << error << "\n";
    return false;
  }
  // The n-gram part first: a base on disk always has its part beside it.
  if (!WriteAtomically(ngrams_path, ngrams) || !WriteAtomically(out_path, base)) return false;
  std::cerr << "tiankong_build_memory: split into " << out_path << " (" << base.size() << " bytes) and " << ngrams_path
            << " (" << ngrams.size() << " bytes)\n";
  return true;
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) {
    fields.push_back(line.substr(start, tab - start));
  }
  fields.push_back(line.substr(start));
  return fields;
}

}  // namespace

int main(int argc, char** argv) {
  std::string vocab_path, corpus_path, texts_path, out_path, weights_path, ngrams_path, split_path;
  tiankong::TokenizerOptions tokenizer_options;
  tokenizer_options.max_length = 1 << 30;  // corpus lines are never truncated
  tiankong::memory::BuildOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    long n = 0;
    if (arg == "--vocab" && has_value) {
      vocab_path = argv[++i];
    } else if (arg == "--corpus" && has_value) {
      corpus_path = argv[++i];
    } else if (arg == "--weights" && has_value) {
      weights_path = argv[++i];
    } else if (arg == "--texts" && has_value) {
      texts_path = argv[++i];
    } else if (arg == "--out" && has_value) {
      out_path = argv[++i];
    } else if (arg == "--ngrams-out" && has_value) {
      ngrams_path = argv[++i];
    } else if (arg == "--split" && has_value) {
      split_path = argv[++i];
    } else if (arg == "--order" && has_value) {
      if (!ParseCount(argv[++i], 2, 8, &n)) {
        std::cerr << "tiankong_build_memory: --order must be 2..8, got '" << argv[i] << "'\n";
        return kExitUsage;
      }
      options.order = static_cast<size_t>(n);
    } else if (arg == "--min-count" && has_value) {
      if (!ParseCount(argv[++i], 1, 1 << 30, &n)) {
        std::cerr << "tiankong_build_memory: --min-count must be a whole number >= 1, got '" << argv[i] << "'\n";
        return kExitUsage;
      }
      options.min_count = static_cast<uint32_t>(n);
    } else if (arg == "--max-ngrams" && has_value) {
      if (!ParseCount(argv[++i], 1, 1L << 31, &n)) {
        std::cerr << "tiankong_build_memory: --max-ngrams must be a whole number >= 1, got '" << argv[i] << "'\n";
        return kExitUsage;
      }
      options.max_ngrams = static_cast<size_t>(n);
    } else if (arg == "--count-exponent" && has_value) {
      char* end;
      options.count_exponent = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(options.count_exponent >= 0 && options.count_exponent <= 2)) {
        std::cerr << "tiankong_build_memory: --count-exponent must be a number from 0 to 2, got '" << argv[i] << "'\n";
        return kExitUsage;
      }
    } else if (arg == "--lowercase") {
      tokenizer_options.lowercase = true;
      tokenizer_options.strip_accents = true;
    } else if (arg == "--description" && has_value) {
      options.description = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "tiankong_build_memory: unknown or incomplete option '" << arg << "'\n" << kUsage;
      return kExitUsage;
    }
  }
  if (!split_path.empty()) {
    if (out_path.empty() || ngrams_path.empty() || !vocab_path.empty() || !corpus_path.empty()) {
      std::cerr << "tiankong_build_memory: --split takes --out and --ngrams-out only\n" << kUsage;
      return kExitUsage;
    }
    std::string whole;
    if (!ReadWhole(split_path, &whole)) {
      std::cerr << "tiankong_build_memory: cannot read '" << split_path << "'\n";
      return kExitFailed;
    }
    const std::vector<uint8_t> bytes(whole.begin(), whole.end());
    return WriteMemory(bytes, out_path, ngrams_path) ? 0 : kExitFailed;
  }
  if (vocab_path.empty() || corpus_path.empty() || texts_path.empty() || out_path.empty()) {
    std::cerr << "tiankong_build_memory: --vocab, --corpus, --texts and --out are required\n" << kUsage;
    return kExitUsage;
  }
  std::string vocab_bytes, error;
  if (!ReadWhole(vocab_path, &vocab_bytes)) {
    std::cerr << "tiankong_build_memory: cannot read vocab '" << vocab_path << "'\n";
    return kExitUsage;
  }
  const auto tokenizer = tiankong::Tokenizer::FromVocab(vocab_bytes, tokenizer_options, &error);
  if (!tokenizer) {
    std::cerr << "tiankong_build_memory: " << vocab_path << ": " << error << "\n";
    return kExitUsage;
  }
  tiankong::memory::MemoryBuilder builder(*tokenizer, options);

  std::ifstream corpus(corpus_path, std::ios::binary);
  if (!corpus) {
    std::cerr << "tiankong_build_memory: cannot read corpus '" << corpus_path << "'\n";
    return kExitUsage;
  }
  std::ifstream weights;
  if (!weights_path.empty()) {
    weights.open(weights_path, std::ios::binary);
    if (!weights) {
      std::cerr << "tiankong_build_memory: cannot read weights '" << weights_path << "'\n";
      return kExitUsage;
    }
  }
  std::string line, weight_line;
  for (size_t number = 1; std::getline(corpus, line); ++number) {
    long weight = 1;
    if (!weights_path.empty() &&
        (!std::getline(weights, weight_line) || !ParseCount(weight_line.c_str(), 1, 255, &weight))) {
      std::cerr << "tiankong_build_memory: " << weights_path << ":" << number
                << ": expected a whole number 1..255 for corpus line " << number << "\n";
      return kExitUsage;
    }
    builder.AddLine(line, static_cast<uint8_t>(weight));
  }

  std::ifstream texts(texts_path, std::ios::binary);
  if (!texts) {
    std::cerr << "tiankong_build_memory: cannot read texts '" << texts_path << "'\n";
    return kExitUsage;
  }
  for (size_t number = 1; std::getline(texts, line); ++number) {
    const std::vector<std::string> fields = SplitTabs(line);
    if (fields.size() < 5 || fields.size() > 6 || (fields[0] != "famous" && fields[0] != "idiom")) {
      std::cerr << "tiankong_build_memory: " << texts_path << ":" << number
                << ": expected 5 or 6 tab-separated fields (famous|idiom, work, title, author, text[, pinyin])\n";
      return kExitUsage;
    }
    builder.AddText(
        {fields[1], fields[2], fields[3], fields[4], fields[0] == "idiom", fields.size() == 6 ? fields[5] : ""});
  }

  tiankong::memory::BuildReport report;
  const std::vector<uint8_t> bytes = builder.Finish(&report, &error);
  if (bytes.empty()) {
    std::cerr << "tiankong_build_memory: " << error << "\n";
    return kExitFailed;
  }
  if (!WriteMemory(bytes, out_path, ngrams_path)) return kExitFailed;
  std::cerr << "tiankong_build_memory: " << out_path << ": " << bytes.size() << " bytes; " << report.lines << " lines, "
            << report.tokens << " tokens; n-grams kept";
  for (size_t n = 2; n < report.kept.size(); ++n) std::cerr << " " << n << ":" << report.kept[n];
  std::cerr << " (" << report.slots << " slots); " << report.texts << " texts (" << report.idioms << " idioms, "
            << report.units << " tokens)\n";
  return 0;
}
