#include "traces/output.h"

#include <lzma.h>
#include <zstd.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "io/file.h"

namespace citcat::traces {
namespace {

constexpr size_t kChunk = 1 << 16;
// Preset 3, not xz's default 6: on ChampSim records it compresses as well (within 1%) and about
// 20 times faster, because the default's deeper match finder crawls on such repetitive data.
constexpr uint32_t kXzPreset = 3;
// 3 times preset 3's 4 MiB dictionary, liblzma's own choice, fixed here so that the file never
// depends on the library version.
constexpr uint64_t kXzBlockBytes = 12 << 20;

// Writes on a thread of its own, so that the trace's producer never waits for the file system:
// one piece in flight while the writer fills its other buffer (ByteOutput::Write's contract).
class ThreadedOutput final : public ByteOutput {
 public:
  explicit ThreadedOutput(std::unique_ptr<ByteOutput> out)
      : out_(std::move(out)), thread_([this] { WriteLoop(); }) {}
  ~ThreadedOutput() override { Stop(); }

  absl::Status Write(absl::string_view bytes) override {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return piece_.empty(); });
    if (!status_.ok()) return status_;
    piece_ = bytes;
    changed_.notify_all();
    return absl::OkStatus();
  }

  absl::Status Close() override {
    Stop();
    if (!status_.ok()) return status_;
    return out_->Close();
  }

 private:
  void WriteLoop() {
    std::unique_lock lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] { return !piece_.empty() || stopping_; });
      if (piece_.empty()) return;
      const absl::string_view piece = piece_;
      lock.unlock();
      absl::Status s = status_.ok() ? out_->Write(piece) : absl::OkStatus();
      lock.lock();
      if (status_.ok()) status_ = std::move(s);
      piece_ = {};
      changed_.notify_all();
    }
  }

  // Waits for the piece in flight, then ends the thread.
  void Stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      changed_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }

  std::unique_ptr<ByteOutput> out_;
  std::mutex mutex_;
  std::condition_variable changed_;
  absl::string_view piece_;  // being written, or empty
  bool stopping_ = false;
  absl::Status status_;  // the first write error
  std::thread thread_;   // last: starts once the rest is built
};

// A file written on the calling thread, done with its bytes when Write returns.
class FileOutput final : public ByteOutput {
 public:
  explicit FileOutput(std::unique_ptr<io::OutputFile> file) : file_(std::move(file)) {}
  absl::Status Write(absl::string_view bytes) override { return file_->Write(bytes); }
  absl::Status Close() override { return file_->Commit(); }

 private:
  std::unique_ptr<io::OutputFile> file_;
};

// liblzma's multi-threaded encoder: the input is cut into blocks of kXzBlockBytes, each
// compressed on its own, so the file is the same whatever the threads.
class XzOutput final : public ByteOutput {
 public:
  explicit XzOutput(std::unique_ptr<ByteOutput> out) : out_(std::move(out)) {}
  ~XzOutput() override { lzma_end(&stream_); }
  absl::Status Init(int threads) {
    lzma_mt mt = {};
    mt.threads = static_cast<uint32_t>(threads > 1 ? threads : 1);
    mt.block_size = kXzBlockBytes;
    mt.preset = kXzPreset;
    mt.check = LZMA_CHECK_CRC64;
    if (lzma_stream_encoder_mt(&stream_, &mt) != LZMA_OK) {
      return absl::InternalError("cannot start the xz compressor");
    }
    return absl::OkStatus();
  }
  absl::Status Write(absl::string_view bytes) override { return Run(bytes, LZMA_RUN); }
  absl::Status Close() override {
    if (absl::Status s = Run({}, LZMA_FINISH); !s.ok()) return s;
    return out_->Close();
  }

 private:
  absl::Status Run(absl::string_view in, lzma_action action) {
    stream_.next_in = reinterpret_cast<const uint8_t*>(in.data());
    stream_.avail_in = in.size();
    while (true) {
      stream_.next_out = buffer_;
      stream_.avail_out = sizeof buffer_;
      lzma_ret r = lzma_code(&stream_, action);
      if (r != LZMA_OK && r != LZMA_STREAM_END) {
        return absl::InternalError(absl::StrCat("xz compression failed (code ", r, ")"));
      }
      const size_t n = sizeof buffer_ - stream_.avail_out;
      if (n > 0) {
        if (absl::Status s = out_->Write(absl::string_view(reinterpret_cast<char*>(buffer_), n));
            !s.ok()) {
          return s;
        }
      }
      if (action == LZMA_FINISH ? r == LZMA_STREAM_END
                                : stream_.avail_in == 0 && stream_.avail_out != 0) {
        return absl::OkStatus();
      }
    }
  }
  std::unique_ptr<ByteOutput> out_;
  lzma_stream stream_ = LZMA_STREAM_INIT;
  uint8_t buffer_[kChunk];
};

// zstd's worker threads: the input is cut into jobs compressed in parallel, and the frame is the
// same for any number of workers from 1 up.
class ZstdOutput final : public ByteOutput {
 public:
  explicit ZstdOutput(std::unique_ptr<ByteOutput> out) : out_(std::move(out)) {}
  ~ZstdOutput() override { ZSTD_freeCCtx(cctx_); }
  absl::Status Init(int threads) {
    cctx_ = ZSTD_createCCtx();
    if (cctx_ == nullptr) return absl::InternalError("cannot start the zstd compressor");
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
    if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_nbWorkers, threads))) {
      return absl::InternalError("this libzstd has no worker threads");
    }
    return absl::OkStatus();
  }
  absl::Status Write(absl::string_view bytes) override { return Run(bytes, ZSTD_e_continue); }
  absl::Status Close() override {
    if (absl::Status s = Run({}, ZSTD_e_end); !s.ok()) return s;
    return out_->Close();
  }

 private:
  absl::Status Run(absl::string_view bytes, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in = {bytes.data(), bytes.size(), 0};
    while (true) {
      ZSTD_outBuffer out = {buffer_, sizeof buffer_, 0};
      const size_t left = ZSTD_compressStream2(cctx_, &out, &in, mode);
      if (ZSTD_isError(left)) {
        return absl::InternalError(
            absl::StrCat("zstd compression failed: ", ZSTD_getErrorName(left)));
      }
      if (out.pos > 0) {
        if (absl::Status s = out_->Write(absl::string_view(buffer_, out.pos)); !s.ok()) return s;
      }
      if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size) return absl::OkStatus();
    }
  }
  std::unique_ptr<ByteOutput> out_;
  ZSTD_CCtx* cctx_ = nullptr;
  char buffer_[kChunk];
};

}  // namespace

int CompressionThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

absl::StatusOr<std::unique_ptr<ByteOutput>> OpenOutput(const std::string& path) {
  return OpenOutput(path, CompressionThreads());
}

absl::StatusOr<std::unique_ptr<ByteOutput>> OpenOutput(const std::string& path,
                                                       int compression_threads, bool scratch) {
  absl::StatusOr<std::unique_ptr<io::OutputFile>> file =
      scratch ? io::OutputFile::CreateScratch(path) : io::OutputFile::Create(path);
  if (!file.ok()) return file.status();
  return EncodeInto(std::make_unique<FileOutput>(*std::move(file)), path, compression_threads);
}

absl::StatusOr<std::unique_ptr<ByteOutput>> EncodeInto(std::unique_ptr<ByteOutput> out,
                                                       absl::string_view name,
                                                       int compression_threads) {
  if (absl::EndsWith(name, ".xz")) {
    auto xz = std::make_unique<XzOutput>(std::move(out));
    if (absl::Status s = xz->Init(compression_threads); !s.ok()) return s;
    return xz;
  }
  if (absl::EndsWith(name, ".zst")) {
    auto zstd = std::make_unique<ZstdOutput>(std::move(out));
    if (absl::Status s = zstd->Init(compression_threads); !s.ok()) return s;
    return zstd;
  }
  return std::make_unique<ThreadedOutput>(std::move(out));
}

absl::StatusOr<std::string> ReadDecompressed(const std::string& path) {
  absl::StatusOr<std::string> raw = io::ReadWholeFile(path, uint64_t{1} << 32);
  if (!raw.ok()) return raw.status();
  std::string out;
  if (absl::EndsWith(path, ".xz")) {
    lzma_stream s = LZMA_STREAM_INIT;
    // Concatenated streams (citcat replay --jobs writes one per segment) read as one, as xz -d
    // reads them.
    if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
      return absl::InternalError("cannot start the xz decompressor");
    }
    s.next_in = reinterpret_cast<const uint8_t*>(raw->data());
    s.avail_in = raw->size();
    std::vector<uint8_t> buf(kChunk);
    lzma_ret r;
    do {
      s.next_out = buf.data();
      s.avail_out = buf.size();
      r = lzma_code(&s, LZMA_FINISH);
      out.append(reinterpret_cast<char*>(buf.data()), buf.size() - s.avail_out);
    } while (r == LZMA_OK);
    lzma_end(&s);
    if (r != LZMA_STREAM_END) return absl::DataLossError(absl::StrCat(path, ": bad xz data"));
    return out;
  }
  if (absl::EndsWith(path, ".zst")) {
    ZSTD_DCtx* d = ZSTD_createDCtx();
    ZSTD_inBuffer in = {raw->data(), raw->size(), 0};
    std::vector<char> buf(kChunk);
    size_t r = 0;
    bool full = true;  // a full output buffer may leave more to flush without more input
    while (in.pos < in.size || full) {
      ZSTD_outBuffer o = {buf.data(), buf.size(), 0};
      r = ZSTD_decompressStream(d, &o, &in);
      if (ZSTD_isError(r)) break;
      out.append(buf.data(), o.pos);
      full = o.pos == o.size;
    }
    ZSTD_freeDCtx(d);
    if (ZSTD_isError(r) || r != 0)
      return absl::DataLossError(absl::StrCat(path, ": bad zstd data"));
    return out;
  }
  return *std::move(raw);
}

absl::StatusOr<uint64_t> CheckCompressed(const std::string& path) {
  absl::StatusOr<std::unique_ptr<io::InputFile>> in = io::InputFile::Open(path);
  if (!in.ok()) return in.status();
  const bool xz = absl::EndsWith(path, ".xz"), zst = absl::EndsWith(path, ".zst");
  std::vector<uint8_t> input(kChunk), output(kChunk);
  uint64_t decompressed = 0;
  if (!xz && !zst) {
    for (;;) {
      absl::StatusOr<size_t> n = (*in)->Read(input);
      if (!n.ok()) return n.status();
      if (*n == 0) return decompressed;
      decompressed += *n;
    }
  }
  if (xz) {
    lzma_stream s = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
      return absl::InternalError("cannot start the xz decompressor");
    }
    lzma_ret r = LZMA_OK;
    bool end_of_file = false;
    while (r == LZMA_OK) {
      if (s.avail_in == 0 && !end_of_file) {
        absl::StatusOr<size_t> n = (*in)->Read(input);
        if (!n.ok()) {
          lzma_end(&s);
          return n.status();
        }
        s.next_in = input.data();
        s.avail_in = *n;
        end_of_file = *n == 0;
      }
      s.next_out = output.data();
      s.avail_out = output.size();
      r = lzma_code(&s, end_of_file ? LZMA_FINISH : LZMA_RUN);
      decompressed += output.size() - s.avail_out;
    }
    const uint64_t offset = s.total_in;
    lzma_end(&s);
    if (r != LZMA_STREAM_END) {
      return absl::DataLossError(absl::StrCat(path, ": bad xz data at byte ", offset,
                                              r == LZMA_BUF_ERROR ? " (cut short)" : ""));
    }
    return decompressed;
  }
  ZSTD_DCtx* d = ZSTD_createDCtx();
  size_t r = 1;  // nothing read yet: not at the end of a frame
  uint64_t offset = 0;
  bool any = false;
  for (;;) {
    absl::StatusOr<size_t> n = (*in)->Read(input);
    if (!n.ok()) {
      ZSTD_freeDCtx(d);
      return n.status();
    }
    if (*n == 0) break;
    any = true;
    ZSTD_inBuffer in_buffer = {input.data(), *n, 0};
    bool full = true;
    while (in_buffer.pos < in_buffer.size || full) {
      ZSTD_outBuffer o = {output.data(), output.size(), 0};
      r = ZSTD_decompressStream(d, &o, &in_buffer);
      if (ZSTD_isError(r)) break;
      decompressed += o.pos;
      full = o.pos == o.size;
    }
    if (ZSTD_isError(r)) break;
    offset += *n;
  }
  ZSTD_freeDCtx(d);
  if (ZSTD_isError(r)) {
    return absl::DataLossError(absl::StrCat(path, ": bad zstd data at or after byte ", offset, ": ",
                                            ZSTD_getErrorName(r)));
  }
  if (!any || r != 0) {
    return absl::DataLossError(absl::StrCat(path, ": zstd data cut short (", offset, " bytes)"));
  }
  return decompressed;
}

}  // namespace citcat::traces
