#include "traces/output.h"

#include <lzma.h>
#include <zstd.h>

#include <cstdint>
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

class PlainOutput : public ByteOutput {
 public:
  explicit PlainOutput(std::unique_ptr<io::OutputFile> file) : file_(std::move(file)) {}
  absl::Status Write(absl::string_view bytes) override { return file_->Write(bytes); }
  absl::Status Close() override { return file_->Commit(); }

 protected:
  std::unique_ptr<io::OutputFile> file_;
};

class XzOutput final : public PlainOutput {
 public:
  using PlainOutput::PlainOutput;
  ~XzOutput() override { lzma_end(&stream_); }
  absl::Status Init() {
    if (lzma_easy_encoder(&stream_, kXzPreset, LZMA_CHECK_CRC64) != LZMA_OK) {
      return absl::InternalError("cannot start the xz compressor");
    }
    return absl::OkStatus();
  }
  absl::Status Write(absl::string_view bytes) override { return Run(bytes, LZMA_RUN); }
  absl::Status Close() override {
    if (absl::Status s = Run({}, LZMA_FINISH); !s.ok()) return s;
    return file_->Commit();
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
        if (absl::Status s = file_->Write(absl::string_view(reinterpret_cast<char*>(buffer_), n));
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
  lzma_stream stream_ = LZMA_STREAM_INIT;
  uint8_t buffer_[kChunk];
};

class ZstdOutput final : public PlainOutput {
 public:
  using PlainOutput::PlainOutput;
  ~ZstdOutput() override { ZSTD_freeCCtx(cctx_); }
  absl::Status Init() {
    cctx_ = ZSTD_createCCtx();
    if (cctx_ == nullptr) return absl::InternalError("cannot start the zstd compressor");
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
    return absl::OkStatus();
  }
  absl::Status Write(absl::string_view bytes) override { return Run(bytes, ZSTD_e_continue); }
  absl::Status Close() override {
    if (absl::Status s = Run({}, ZSTD_e_end); !s.ok()) return s;
    return file_->Commit();
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
        if (absl::Status s = file_->Write(absl::string_view(buffer_, out.pos)); !s.ok()) return s;
      }
      if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size) return absl::OkStatus();
    }
  }
  ZSTD_CCtx* cctx_ = nullptr;
  char buffer_[kChunk];
};

}  // namespace

absl::StatusOr<std::unique_ptr<ByteOutput>> OpenOutput(const std::string& path) {
  absl::StatusOr<std::unique_ptr<io::OutputFile>> file = io::OutputFile::Create(path);
  if (!file.ok()) return file.status();
  if (absl::EndsWith(path, ".xz")) {
    auto out = std::make_unique<XzOutput>(*std::move(file));
    if (absl::Status s = out->Init(); !s.ok()) return s;
    return out;
  }
  if (absl::EndsWith(path, ".zst")) {
    auto out = std::make_unique<ZstdOutput>(*std::move(file));
    if (absl::Status s = out->Init(); !s.ok()) return s;
    return out;
  }
  return std::make_unique<PlainOutput>(*std::move(file));
}

absl::StatusOr<std::string> ReadDecompressed(const std::string& path) {
  absl::StatusOr<std::string> raw = io::ReadWholeFile(path, uint64_t{1} << 32);
  if (!raw.ok()) return raw.status();
  std::string out;
  if (absl::EndsWith(path, ".xz")) {
    lzma_stream s = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) {
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

}  // namespace citcat::traces
