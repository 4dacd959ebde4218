// Native benchmark of the decode path: the SIMD row kernels against their scalar
// references, Decoder::Decode for 1/3/10 mask rows of a bert-base-chinese-sized vocab
// (also with the rows split over 2 threads, to see whether threading would pay), and
// FingerprintCache hit latency.
//
// usage: decoder_bench [--vocab vocab.txt] [--json out.json]
// Prints a table; --json also writes the numbers (scripts/bench-core collects them).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "simd_kernels.h"
#include "tiankong/tiankong.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  double wall_us;  // what a caller waits
  double cpu_us;   // process CPU time: robust to other jobs on this shared machine
};

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Medians over `rounds` of the mean wall and CPU time of `inner` calls, in microseconds.
// Medians resist the background load of this machine better than means.
Timing Measure(const std::function<void()>& body, int inner, int rounds = 15) {
  for (int i = 0; i < inner; ++i) body();  // warm caches and branch predictors
  std::vector<double> wall, cpu;
  for (int r = 0; r < rounds; ++r) {
    const auto start = Clock::now();
    const double cpu_start = ProcessCpuSeconds();
    for (int i = 0; i < inner; ++i) body();
    cpu.push_back((ProcessCpuSeconds() - cpu_start) * 1e6 / inner);
    wall.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() / inner);
  }
  const auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  return {median(wall), median(cpu)};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

volatile double g_sink;  // keeps results alive so the work is not optimized away

}  // namespace

int main(int argc, char** argv) {
  std::string vocab_path = "../shared/data/vocab/bert-base-chinese/vocab.txt";
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--vocab") {
      vocab_path = argv[i + 1];
    } else if (flag == "--json") {
      json_path = argv[i + 1];
    } else {
      std::fprintf(stderr, "decoder_bench: unknown option %s\nusage: decoder_bench [--vocab FILE] [--json FILE]\n",
                   argv[i]);
      return 2;
    }
  }
  const std::string vocab_bytes = ReadFile(vocab_path);
  std::string error;
  auto tokenizer = tiankong::Tokenizer::FromVocab(vocab_bytes, tiankong::TokenizerOptions{}, &error);
  if (tokenizer == nullptr) {
    std::fprintf(stderr, "decoder_bench: cannot load vocab %s: %s\n", vocab_path.c_str(), error.c_str());
    return 1;
  }
  const size_t vocab = tokenizer->VocabSize();

  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> logits(10 * vocab);
  for (float& v : logits) v = dist(rng);

  std::ostringstream json;
  json << "{\n  \"isa\": \"" << tiankong::simd::KernelIsa() << "\",\n  \"vocab\": " << vocab << ",\n";
  std::printf("decoder_bench (native, kernels: %s, vocab %zu)\n", tiankong::simd::KernelIsa(), vocab);

  // Kernels on one row.
  const float* row = logits.data();
  const float row_max = tiankong::simd::ScanRowScalar(row, vocab).max;
  const auto cpu_us = [](const std::function<void()>& body) { return Measure(body, 200).cpu_us; };
  const double scan_simd = cpu_us([&] { g_sink = tiankong::simd::ScanRow(row, vocab).max; });
  const double scan_scalar = cpu_us([&] { g_sink = tiankong::simd::ScanRowScalar(row, vocab).max; });
  const double sum_simd = cpu_us([&] { g_sink = tiankong::simd::SumExpShifted(row, vocab, row_max); });
  const double sum_scalar = cpu_us([&] { g_sink = tiankong::simd::SumExpShiftedScalar(row, vocab, row_max); });
  std::printf("  CPU us per row: max+NaN scan %.2f (scalar %.2f), sum exp %.2f (scalar %.2f)\n", scan_simd, scan_scalar,
              sum_simd, sum_scalar);
  json << "  \"kernels_cpu_us\": {\"scan\": " << scan_simd << ", \"scan_scalar\": " << scan_scalar
       << ", \"sum_exp\": " << sum_simd << ", \"sum_exp_scalar\": " << sum_scalar << "},\n";

  // Whole decode, rows in one thread and split over two.
  tiankong::DecodeOptions options;
  options.top_k = 5;
  const tiankong::Decoder decoder(*tokenizer, options);
  std::vector<tiankong::Decoded> out, out_a, out_b;
  json << "  \"decode\": {";
  for (size_t rows : {1u, 3u, 10u}) {
    const Timing one_thread = Measure([&] { decoder.Decode(logits.data(), rows, vocab, &out); }, 50);
    const size_t half = rows / 2;
    const Timing two_threads = Measure(
        [&] {
          std::thread worker([&] { decoder.Decode(logits.data(), half, vocab, &out_a); });
          decoder.Decode(logits.data() + half * vocab, rows - half, vocab, &out_b);
          worker.join();
        },
        50);
    std::printf("  decode %2zu rows: %7.1f us CPU, %7.1f us wall; rows over 2 threads: %7.1f us wall\n", rows,
                one_thread.cpu_us, one_thread.wall_us, two_threads.wall_us);
    json << (rows == 1 ? "" : ", ") << "\"rows_" << rows << "\": {\"cpu_us\": " << one_thread.cpu_us
         << ", \"wall_us\": " << one_thread.wall_us << ", \"two_threads_wall_us\": " << two_threads.wall_us << "}";
  }
  json << "},\n";

  // Cache: a typical key (64 ids, 2 masks) and a serialized top-5 result.
  tiankong::FingerprintCache cache(4096, 64 << 20);
  std::vector<int32_t> ids(64);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = 100 + static_cast<int32_t>(i * 37 % 20000);
  const std::vector<int32_t> masks = {10, 40};
  for (int32_t k = 0; k < 1000; ++k) {
    ids[1] = k;
    cache.Put(tiankong::FingerprintCache::MakeKey(ids, masks, "topK=5"), std::string(120, 'r'));
  }
  std::string value;
  int32_t probe = 0;
  const double hit = Measure(
                         [&] {
                           ids[1] = probe++ % 1000;
                           g_sink = cache.Get(tiankong::FingerprintCache::MakeKey(ids, masks, "topK=5"), &value);
                         },
                         10000)
                         .cpu_us;
  std::printf("  cache hit (MakeKey + Get, 64 ids): %.3f us CPU\n", hit);
  json << "  \"cache_hit_cpu_us\": " << hit << "\n}\n";

  if (!json_path.empty()) {
    std::ofstream(json_path) << json.str();
  }
  return 0;
}
