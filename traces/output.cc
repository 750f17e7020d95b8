#include "traces/output.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>
#ifdef CITCAT_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include <array>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
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

// gzip, the format every trace-driven simulator opens (ChampSim through gzip -dc). ISA-L's
// igzip at level 1 where the build has it (several times zlib's speed), else zlib at level 1;
// the header has no name and no time, so the same trace gives the same file.
class GzipOutput final : public ByteOutput {
 public:
  explicit GzipOutput(std::unique_ptr<ByteOutput> out) : out_(std::move(out)) {}
#ifdef CITCAT_HAVE_ISAL
  absl::Status Init() {
    isal_deflate_init(&stream_);
    stream_.gzip_flag = IGZIP_GZIP;
    stream_.level = 1;
    level_buffer_.resize(ISAL_DEF_LVL1_DEFAULT);
    stream_.level_buf = level_buffer_.data();
    stream_.level_buf_size = level_buffer_.size();
    return absl::OkStatus();
  }
#else
  ~GzipOutput() override {
    if (started_) deflateEnd(&stream_);
  }
  absl::Status Init() {
    if (deflateInit2(&stream_, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      return absl::InternalError("cannot start the gzip compressor");
    }
    started_ = true;
    return absl::OkStatus();
  }
#endif
  absl::Status Write(absl::string_view bytes) override {
    // The streams count in 32 bits.
    for (size_t at = 0; at < bytes.size(); at += kPiece) {
      if (absl::Status s = Run(bytes.substr(at, kPiece), false); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  absl::Status Close() override {
    if (absl::Status s = Run({}, true); !s.ok()) return s;
    return out_->Close();
  }

 private:
  static constexpr size_t kPiece = size_t{1} << 30;

  absl::Status Run(absl::string_view in, bool end) {
    stream_.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(in.data()));
    stream_.avail_in = static_cast<uint32_t>(in.size());
    for (;;) {
      stream_.next_out = buffer_;
      stream_.avail_out = sizeof buffer_;
#ifdef CITCAT_HAVE_ISAL
      stream_.end_of_stream = end;
      const bool ok = isal_deflate(&stream_) == COMP_OK;
      const bool finished = stream_.internal_state.state == ZSTATE_END;
#else
      const int r = deflate(&stream_, end ? Z_FINISH : Z_NO_FLUSH);
      const bool ok = r == Z_OK || r == Z_STREAM_END || r == Z_BUF_ERROR;
      const bool finished = r == Z_STREAM_END;
#endif
      if (!ok) return absl::InternalError("gzip compression failed");
      const size_t n = sizeof buffer_ - stream_.avail_out;
      if (n > 0) {
        if (absl::Status s = out_->Write(absl::string_view(reinterpret_cast<char*>(buffer_), n));
            !s.ok()) {
          return s;
        }
      }
      if (end ? finished : stream_.avail_in == 0 && stream_.avail_out != 0) {
        return absl::OkStatus();
      }
    }
  }

  std::unique_ptr<ByteOutput> out_;
#ifdef CITCAT_HAVE_ISAL
  isal_zstream stream_;
  std::vector<uint8_t> level_buffer_;
#else
  z_stream stream_ = {};
  bool started_ = false;
#endif
  uint8_t buffer_[kChunk];
};

constexpr std::array<absl::string_view, 12> kForeignSuffixes = {
    ".bz2", ".lz4", ".lzma", ".lz", ".lzo", ".Z", ".br", ".sz", ".7z", ".zip", ".tgz", ".tar"};

}  // namespace

int CompressionThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

absl::StatusOr<std::unique_ptr<ByteOutput>> OpenOutput(const std::string& path) {
  return OpenOutput(path, CompressionThreads());
}

Compression CompressionOf(absl::string_view name) {
  if (absl::EndsWith(name, ".xz")) return Compression::kXz;
  if (absl::EndsWith(name, ".zst")) return Compression::kZstd;
  if (absl::EndsWith(name, ".gz")) return Compression::kGzip;
  return Compression::kNone;
}

absl::string_view SuffixOf(Compression compression) {
  switch (compression) {
    case Compression::kXz:
      return ".xz";
    case Compression::kZstd:
      return ".zst";
    case Compression::kGzip:
      return ".gz";
    case Compression::kNone:
      break;
  }
  return "";
}

absl::Status CheckCompressionSuffix(absl::string_view name) {
  for (absl::string_view suffix : kForeignSuffixes) {
    if (absl::EndsWith(name, suffix)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": citcat compresses traces as .gz, .xz or .zst, not as ", suffix,
                       " (a plain file has none of these suffixes)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ByteOutput>> OpenOutput(const std::string& path,
                                                       int compression_threads, bool scratch) {
  if (absl::Status s = CheckCompressionSuffix(path); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<io::OutputFile>> file =
      scratch ? io::OutputFile::CreateScratch(path) : io::OutputFile::Create(path);
  if (!file.ok()) return file.status();
  return EncodeInto(std::make_unique<FileOutput>(*std::move(file)), path, compression_threads);
}

absl::StatusOr<std::unique_ptr<ByteOutput>> EncodeInto(std::unique_ptr<ByteOutput> out,
                                                       absl::string_view name,
                                                       int compression_threads) {
  if (absl::Status s = CheckCompressionSuffix(name); !s.ok()) return s;
  switch (CompressionOf(name)) {
    case Compression::kXz: {
      auto xz = std::make_unique<XzOutput>(std::move(out));
      if (absl::Status s = xz->Init(compression_threads); !s.ok()) return s;
      return xz;
    }
    case Compression::kZstd: {
      auto zstd = std::make_unique<ZstdOutput>(std::move(out));
      if (absl::Status s = zstd->Init(compression_threads); !s.ok()) return s;
      return zstd;
    }
    case Compression::kGzip: {
      // One thread compresses while the trace's producer goes on.
      auto gzip = std::make_unique<GzipOutput>(std::move(out));
      if (absl::Status s = gzip->Init(); !s.ok()) return s;
      return std::make_unique<ThreadedOutput>(std::move(gzip));
    }
    case Compression::kNone:
      break;
  }
  return std::make_unique<ThreadedOutput>(std::move(out));
}

namespace {

// A decompressor fed a file in pieces, handing on what it decompresses; `last`: the file's end,
// where the data must be complete.
class Decoder {
 public:
  using Consume = std::function<void(absl::string_view)>;
  virtual ~Decoder() = default;
  virtual absl::Status Feed(absl::string_view in, bool last, const Consume& consume) = 0;
};

class PlainDecoder final : public Decoder {
 public:
  absl::Status Feed(absl::string_view in, bool, const Consume& consume) override {
    consume(in);
    return absl::OkStatus();
  }
};

// Concatenated streams (citcat replay --jobs writes one per segment) read as one, as xz -d
// reads them.
class XzDecoder final : public Decoder {
 public:
  explicit XzDecoder(std::string path) : path_(std::move(path)) {}
  ~XzDecoder() override { lzma_end(&s_); }
  absl::Status Feed(absl::string_view in, bool last, const Consume& consume) override {
    if (!started_) {
      if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
        return absl::InternalError("cannot start the xz decompressor");
      }
      started_ = true;
    }
    s_.next_in = reinterpret_cast<const uint8_t*>(in.data());
    s_.avail_in = in.size();
    for (;;) {
      s_.next_out = buffer_;
      s_.avail_out = sizeof buffer_;
      const lzma_ret r = lzma_code(&s_, last ? LZMA_FINISH : LZMA_RUN);
      consume(absl::string_view(reinterpret_cast<char*>(buffer_), sizeof buffer_ - s_.avail_out));
      if (r == LZMA_STREAM_END) return absl::OkStatus();
      if (r != LZMA_OK) {
        return absl::DataLossError(absl::StrCat(path_, ": bad xz data at byte ", s_.total_in,
                                                r == LZMA_BUF_ERROR ? " (cut short)" : ""));
      }
      if (!last && s_.avail_in == 0 && s_.avail_out != 0) return absl::OkStatus();
    }
  }

 private:
  std::string path_;
  lzma_stream s_ = LZMA_STREAM_INIT;
  bool started_ = false;
  uint8_t buffer_[kChunk];
};

// Concatenated frames read as one.
class ZstdDecoder final : public Decoder {
 public:
  explicit ZstdDecoder(std::string path) : path_(std::move(path)), d_(ZSTD_createDCtx()) {}
  ~ZstdDecoder() override { ZSTD_freeDCtx(d_); }
  absl::Status Feed(absl::string_view in, bool last, const Consume& consume) override {
    ZSTD_inBuffer input = {in.data(), in.size(), 0};
    // A full output buffer may leave more to flush without more input; with no input, the last
    // piece has been flushed already (another call would start a new frame).
    bool full = !in.empty();
    while (input.pos < input.size || full) {
      ZSTD_outBuffer out = {buffer_, sizeof buffer_, 0};
      left_ = ZSTD_decompressStream(d_, &out, &input);
      if (ZSTD_isError(left_)) {
        return absl::DataLossError(absl::StrCat(path_, ": bad zstd data at or after byte ", offset_,
                                                ": ", ZSTD_getErrorName(left_)));
      }
      consume(absl::string_view(buffer_, out.pos));
      full = out.pos == out.size;
    }
    offset_ += in.size();
    if (last && (offset_ == 0 || left_ != 0)) {
      return absl::DataLossError(
          absl::StrCat(path_, ": zstd data cut short (", offset_, " bytes)"));
    }
    return absl::OkStatus();
  }

 private:
  std::string path_;
  ZSTD_DCtx* d_;
  size_t left_ = 1;  // nothing read yet: not at the end of a frame
  uint64_t offset_ = 0;
  char buffer_[kChunk];
};

// zlib, the reference reader of gzip; concatenated members (one per segment of --jobs) read
// as one, as gzip -d reads them.
class GzipDecoder final : public Decoder {
 public:
  explicit GzipDecoder(std::string path) : path_(std::move(path)) {}
  ~GzipDecoder() override {
    if (started_) inflateEnd(&z_);
  }
  absl::Status Feed(absl::string_view in, bool last, const Consume& consume) override {
    if (!started_) {
      if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) {
        return absl::InternalError("cannot start the gzip decompressor");
      }
      started_ = true;
    }
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = in.size();
    while (z_.avail_in > 0 || (!member_ended_ && z_.avail_out == 0)) {
      if (member_ended_) {
        inflateReset(&z_);
        member_ended_ = false;
      }
      z_.next_out = buffer_;
      z_.avail_out = sizeof buffer_;
      const int r = inflate(&z_, Z_NO_FLUSH);
      consume(absl::string_view(reinterpret_cast<char*>(buffer_), sizeof buffer_ - z_.avail_out));
      if (r == Z_STREAM_END) {
        member_ended_ = true;
        z_.avail_out = 1;  // nothing more to flush from this member
      } else if (r == Z_BUF_ERROR && z_.avail_in == 0) {
        break;
      } else if (r != Z_OK) {
        return absl::DataLossError(
            absl::StrCat(path_, ": bad gzip data at byte ", offset_ + in.size() - z_.avail_in));
      }
    }
    offset_ += in.size();
    if (last && !member_ended_) {
      return absl::DataLossError(
          absl::StrCat(path_, ": gzip data cut short (", offset_, " bytes)"));
    }
    return absl::OkStatus();
  }

 private:
  std::string path_;
  z_stream z_ = {};
  bool started_ = false;
  bool member_ended_ = false;
  uint64_t offset_ = 0;
  Bytef buffer_[kChunk];
};

}  // namespace

absl::StatusOr<uint64_t> Decompress(const std::string& path,
                                    const std::function<void(absl::string_view)>& consume) {
  absl::StatusOr<std::unique_ptr<io::InputFile>> in = io::InputFile::Open(path);
  if (!in.ok()) return in.status();
  std::unique_ptr<Decoder> decoder;
  switch (CompressionOf(path)) {
    case Compression::kNone:
      decoder = std::make_unique<PlainDecoder>();
      break;
    case Compression::kXz:
      decoder = std::make_unique<XzDecoder>(path);
      break;
    case Compression::kZstd:
      decoder = std::make_unique<ZstdDecoder>(path);
      break;
    case Compression::kGzip:
      decoder = std::make_unique<GzipDecoder>(path);
      break;
  }
  uint64_t total = 0;
  const Decoder::Consume count = [&](absl::string_view bytes) {
    total += bytes.size();
    consume(bytes);
  };
  std::vector<char> input(kChunk);
  for (;;) {
    absl::StatusOr<size_t> n =
        (*in)->Read(std::span<uint8_t>(reinterpret_cast<uint8_t*>(input.data()), input.size()));
    if (!n.ok()) return n.status();
    if (absl::Status s = decoder->Feed(absl::string_view(input.data(), *n), *n == 0, count);
        !s.ok()) {
      return s;
    }
    if (*n == 0) return total;
  }
}

absl::StatusOr<std::string> ReadDecompressed(const std::string& path) {
  std::string out;
  absl::StatusOr<uint64_t> n =
      Decompress(path, [&](absl::string_view bytes) { out.append(bytes.data(), bytes.size()); });
  if (!n.ok()) return n.status();
  return out;
}

absl::StatusOr<uint64_t> CheckCompressed(const std::string& path) {
  return Decompress(path, [](absl::string_view) {});
}

}  // namespace citcat::traces
