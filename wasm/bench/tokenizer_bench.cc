// Tokenizer throughput on text files (one input per line): MB/s of UTF-8 input and tokens/s,
// single thread, best of --repeat passes. Rates are per CPU second (the build machine is
// shared with training jobs, which inflates wall time); wall seconds are reported too. Prints one JSON object;
// scripts/bench-tokenizer runs it next to Hugging Face `tokenizers` on the same lines. Usage: tokenizer_bench --vocab
// PATH [--repeat N] FILE...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tiankong/tiankong.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::cerr << "tokenizer_bench: cannot read '" << path << "'\n";
    std::exit(64);
  }
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string vocab_path;
  int repeat = 3;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--vocab" && i + 1 < argc) {
      vocab_path = argv[++i];
    } else if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else {
      files.push_back(arg);
    }
  }
  if (vocab_path.empty() || files.empty() || repeat < 1) {
    std::cerr << "usage: tokenizer_bench --vocab PATH [--repeat N>=1] FILE...\n";
    return 64;
  }
  tiankong::TokenizerOptions options;
  options.max_length = 1 << 30;  // measure whole lines, as the reference does without truncation
  std::string error;
  const auto tokenizer = tiankong::Tokenizer::FromVocab(ReadFile(vocab_path), options, &error);
  if (!tokenizer) {
    std::cerr << "tokenizer_bench: " << vocab_path << ": " << error << "\n";
    return 64;
  }

  std::vector<std::string> lines;
  size_t bytes = 0;
  for (const std::string& path : files) {
    std::istringstream text(ReadFile(path));
    for (std::string line; std::getline(text, line);) {
      if (line.empty()) continue;
      bytes += line.size();
      lines.push_back(std::move(line));
    }
  }

  double best_cpu_seconds = 1e300, best_wall_seconds = 1e300;
  size_t tokens = 0;
  tiankong::Encoding encoding;
  for (int pass = 0; pass < repeat; ++pass) {
    size_t pass_tokens = 0;
    const std::clock_t cpu_start = std::clock();
    const auto wall_start = std::chrono::steady_clock::now();
    for (const std::string& line : lines) {
      if (tokenizer->Encode(line, &encoding) != tiankong::Status::kOk) {
        std::cerr << "tokenizer_bench: a line is not valid UTF-8\n";
        return 2;
      }
      pass_tokens += encoding.ids.size();
    }
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall_start;
    best_cpu_seconds = std::min(best_cpu_seconds, double(std::clock() - cpu_start) / CLOCKS_PER_SEC);
    best_wall_seconds = std::min(best_wall_seconds, wall.count());
    tokens = pass_tokens;
  }
  std::printf(
      "{\"implementation\":\"tiankong native (C++, 1 thread)\",\"lines\":%zu,\"bytes\":%zu,"
      "\"tokens\":%zu,\"cpu_seconds\":%.6f,\"wall_seconds\":%.6f,\"mb_per_s\":%.3f,"
      "\"tokens_per_s\":%.0f,\"repeat\":%d}\n",
      lines.size(), bytes, tokens, best_cpu_seconds, best_wall_seconds, bytes / best_cpu_seconds / 1e6,
      tokens / best_cpu_seconds, repeat);
  return 0;
}
