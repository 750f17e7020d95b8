// What the form tests share: every format written twice from the same records, once as they
// come (writers take each form's template from their caches) and once from copies without a
// form (every template worked out afresh), and a check of the promise a form makes.
#ifndef CITCAT_TESTS_TRACES_MEMOIZED_AND_NOT_H_
#define CITCAT_TESTS_TRACES_MEMOIZED_AND_NOT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "traces/output.h"
#include "traces/sink.h"
#include "traces/writers.h"

namespace citcat::traces {

inline constexpr Format kFormats[] = {Format::kText,      Format::kChampSim, Format::kPenn,
                                      Format::kDin,       Format::kIdtrace,  Format::kIdtraceExec,
                                      Format::kTextValues};

// The bytes written: their length, an FNV-1a hash, and the bytes themselves if `keep`.
class DigestOutput final : public ByteOutput {
 public:
  explicit DigestOutput(bool keep) : keep_(keep) {}
  absl::Status Write(absl::string_view bytes) override {
    for (char c : bytes) hash_ = (hash_ ^ static_cast<uint8_t>(c)) * 0x100000001B3;
    length_ += bytes.size();
    if (keep_) bytes_.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  absl::Status Close() override { return absl::OkStatus(); }
  uint64_t length() const { return length_; }
  uint64_t hash() const { return hash_; }
  const std::string& bytes() const { return bytes_; }

 private:
  const bool keep_;
  uint64_t length_ = 0, hash_ = 0xCBF29CE484222325;
  std::string bytes_;
};

// Every format behind one filter.
class AllFormats {
 public:
  AllFormats(const Filter& filter, bool keep) {
    for (Format f : kFormats) {
      auto out = std::make_unique<DigestOutput>(keep);
      outputs_.push_back(out.get());
      writers_.push_back(NewWriter(f, std::move(out)));
      filters_.push_back(std::make_unique<FilterSink>(filter, *writers_.back()));
    }
  }
  absl::Status Consume(const Record& r) {
    for (auto& f : filters_) {
      if (absl::Status s = f->Consume(r); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  void Finish() {
    for (auto& f : filters_) EXPECT_TRUE(f->Finish().ok());
  }
  const DigestOutput& output(size_t format) const { return *outputs_[format]; }

 private:
  std::vector<DigestOutput*> outputs_;  // owned by the writers
  std::vector<std::unique_ptr<TraceSink>> writers_, filters_;
};

// The records as they come and, separately, copies of them without a form.
class MemoizedAndNot final : public TraceSink {
 public:
  // `keep`: hold the bytes (small traces), for text().
  explicit MemoizedAndNot(const Filter& filter = {}, bool keep = true)
      : memoized_(filter, keep), reference_(filter, keep) {}
  absl::Status Consume(const Record& r) override {
    with_form_ += r.form != 0;
    Record copy = r;
    copy.form = 0;
    if (absl::Status s = memoized_.Consume(r); !s.ok()) return s;
    return reference_.Consume(copy);
  }
  bool WantsRegisterValues() const override { return true; }  // text-values
  absl::Status Finish() override {
    memoized_.Finish();
    reference_.Finish();
    return absl::OkStatus();
  }
  // After Finish: each format's bytes the same both ways, and not none.
  void ExpectSame() const {
    EXPECT_GT(with_form_, 0u);
    for (size_t i = 0; i < std::size(kFormats); ++i) {
      const DigestOutput &a = memoized_.output(i), &b = reference_.output(i);
      EXPECT_GT(b.length(), 0u) << "format " << i;
      EXPECT_EQ(a.length(), b.length()) << "format " << i;
      EXPECT_EQ(a.hash(), b.hash()) << "format " << i;
      EXPECT_EQ(a.bytes(), b.bytes()) << "format " << i;
    }
  }
  // The text trace as written from forms.
  const std::string& text() const { return memoized_.output(0).bytes(); }

 private:
  AllFormats memoized_, reference_;
  uint64_t with_form_ = 0;
};

// Checks the promise of a form: records that share it share their static fields.
class FormChecker final : public TraceSink {
 public:
  absl::Status Consume(const Record& r) override {
    if (r.form == 0) return absl::OkStatus();
    auto [it, first] = seen_.try_emplace(r.form, Static(r));
    if (!first && !(it->second == Static(r))) ++broken_;
    return absl::OkStatus();
  }
  uint64_t forms() const { return seen_.size(); }
  uint64_t broken() const { return broken_; }

 private:
  struct StaticPart {
    uint64_t pc, next_pc, fallthrough;
    std::vector<uint8_t> bytes;
    const RegisterSet* registers;
    std::string mnemonic, disassembly;
    int64_t immediate;
    std::vector<uint16_t> read, written;
    BranchKind branch;
    bool delay_slot;
    bool operator==(const StaticPart&) const = default;
  };
  static StaticPart Static(const Record& r) {
    return {r.pc,
            r.next_pc,
            r.fallthrough,
            {r.bytes, r.bytes + r.size},
            r.registers,
            std::string(r.mnemonic),
            std::string(r.Disassembly()),
            r.immediate,
            {r.read.begin(), r.read.end()},
            {r.written.begin(), r.written.end()},
            r.branch,
            r.delay_slot};
  }
  absl::flat_hash_map<uint64_t, StaticPart> seen_;
  uint64_t broken_ = 0;
};

}  // namespace citcat::traces

#endif  // CITCAT_TESTS_TRACES_MEMOIZED_AND_NOT_H_
