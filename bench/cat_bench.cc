// CAT reader and writer throughput on a large generated CAT, against plain read() and write() of
// the same bytes measured in the same run (the peer: what the disk cache can deliver at best).
//   build/bench/cat_bench [--cat_bench_mb=512] [google benchmark flags]
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "cat_parser/reader.h"
#include "cat_parser/synthetic.h"
#include "cat_parser/writer.h"

namespace {

using namespace citcat::cat;  // NOLINT

uint64_t g_target_bytes = 512ull << 20;
std::string g_dir;
std::string g_cat;  // the CAT every reading benchmark reads
uint64_t g_cat_bytes = 0;
uint64_t g_cat_records = 0;

// Records are generated once up front so that writing measures the writer, not the generator.
struct RecordPool {
  CatHeader header = SyntheticHeader(Machine::kR4400);
  std::vector<OwnedRecord> records;
  uint64_t bytes = 0;  // encoded size of one pass over the pool
  RecordPool() {
    SyntheticRecords source(header, 1);
    for (int i = 0; i < 200000; ++i) {
      records.emplace_back(source.Next());
      bytes += 24 + records.back().data.size();
    }
  }
};
RecordPool& Pool() {
  static RecordPool pool;
  return pool;
}

void MakeCat() {
  RecordPool& pool = Pool();
  auto writer = CatWriter::Create(g_cat, pool.header);
  if (!writer.ok()) std::abort();
  uint64_t written = 0;
  while (written < g_target_bytes) {
    for (const OwnedRecord& r : pool.records) {
      if (!(*writer)->Write(r.view()).ok()) std::abort();
    }
    written += pool.bytes;
  }
  g_cat_records = (*writer)->records_written();
  if (!(*writer)->Finish().ok()) std::abort();
  g_cat_bytes = std::filesystem::file_size(g_cat);
}

void BM_ReadRaw(benchmark::State& state) {
  std::vector<char> buffer(1 << 20);
  for (auto _ : state) {
    int fd = open(g_cat.c_str(), O_RDONLY);
    while (read(fd, buffer.data(), buffer.size()) > 0) {
    }
    close(fd);
  }
  state.SetBytesProcessed(state.iterations() * g_cat_bytes);
}

void BM_ReadCat(benchmark::State& state) {
  uint64_t sum = 0;
  for (auto _ : state) {
    auto reader = CatReader::Open(g_cat);
    BusRecord r;
    while (*(*reader)->Next(r)) sum += r.address;
  }
  benchmark::DoNotOptimize(sum);
  state.SetBytesProcessed(state.iterations() * g_cat_bytes);
  state.SetItemsProcessed(state.iterations() * g_cat_records);
}

void BM_WriteRaw(benchmark::State& state) {
  std::vector<char> buffer(1 << 20, 'x');
  std::string path = g_dir + "/raw.bin";
  for (auto _ : state) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (uint64_t n = 0; n < g_cat_bytes; n += buffer.size()) {
      if (write(fd, buffer.data(), buffer.size()) < 0) std::abort();
    }
    close(fd);
  }
  state.SetBytesProcessed(state.iterations() * g_cat_bytes);
}

void BM_WriteCat(benchmark::State& state) {
  RecordPool& pool = Pool();
  std::string path = g_dir + "/written.cat";
  for (auto _ : state) {
    auto writer = CatWriter::Create(path, pool.header);
    for (uint64_t n = 0; n < g_cat_records;) {
      for (size_t i = 0; i < pool.records.size() && n < g_cat_records; ++i, ++n) {
        if (!(*writer)->Write(pool.records[i].view()).ok()) std::abort();
      }
    }
    if (!(*writer)->Finish().ok()) std::abort();
  }
  state.SetBytesProcessed(state.iterations() * g_cat_bytes);
  state.SetItemsProcessed(state.iterations() * g_cat_records);
}

BENCHMARK(BM_ReadRaw)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_ReadCat)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_WriteRaw)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(BM_WriteCat)->Unit(benchmark::kMillisecond)->MinTime(2);

// Keeps each run's throughput so the ratios can be printed after the table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      auto it = run.counters.find("bytes_per_second");
      std::string name = run.benchmark_name();
      if (it != run.counters.end()) rate_[name.substr(0, name.find('/'))] = it->second;
    }
  }
  void PrintRatios() const {
    auto ratio = [&](const char* ours, const char* peer, const char* what) {
      if (!rate_.count(ours) || !rate_.count(peer)) return;
      std::printf("%s: %.0f MB/s, %.2fx plain %s of the same bytes (%.0f MB/s)\n", what,
                  rate_.at(ours) / 1e6, rate_.at(ours) / rate_.at(peer), what,
                  rate_.at(peer) / 1e6);
    };
    std::printf("\nCAT of %.0f MB, %llu records, %.1f bytes per record\n", g_cat_bytes / 1e6,
                static_cast<unsigned long long>(g_cat_records),
                static_cast<double>(g_cat_bytes) / g_cat_records);
    ratio("BM_ReadCat", "BM_ReadRaw", "read");
    ratio("BM_WriteCat", "BM_WriteRaw", "write");
  }

 private:
  std::map<std::string, double> rate_;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--cat_bench_mb=", 0) == 0) {
      g_target_bytes = std::stoull(a.substr(15)) << 20;
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  char dir[] = "/tmp/citcat-bench-XXXXXX";
  g_dir = mkdtemp(dir);
  g_cat = g_dir + "/large.cat";
  MakeCat();
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintRatios();
  std::filesystem::remove_all(g_dir);
  return 0;
}
