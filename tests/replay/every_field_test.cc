// Every field of the IMS and the AES, edited one at a time, on both machines: in a capture of the
// guest kernel running its I/O workload and in the bare-metal self-test traced from reset
// (examples/<machine>-bare-metal/selftest.S). Replay must then diverge, refuse its input, or
// regenerate a CAT that differs from the capture (so verify fails), or else write exactly the
// instruction traces of the unedited replay. No edit may give a different trace that verify
// passes (docs/ims-aes.md, "What verify proves"). The fields are found by reflection, so a field
// added to a schema is edited too.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cat_parser/reader.h"
#include "gtest/gtest.h"
#include "replay/verify.h"
#include "systems/system.h"
#include "traces/output.h"
#include "traces/writers.h"

namespace citcat::replay {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

struct Capture {
  std::string cat_path;
  extract::Extraction x;
};

// Which capture: the machine, and the guest kernel's or the bare-metal program's from reset.
using Traced = std::tuple<std::string, bool>;

const Capture& Captured(const Traced& traced) {
  static std::map<Traced, Capture>* captures = new std::map<Traced, Capture>;
  auto [it, added] = captures->try_emplace(traced);
  Capture& c = it->second;
  if (!added) return c;
  const auto& [machine, from_reset] = traced;
  auto system = systems::ByName(machine);
  EXPECT_TRUE(system.ok()) << system.status();
  systems::CaptureRequest request;
  if (from_reset) {
    request.rom = machine == "r4400" ? CITCAT_R4400_SELFTEST : CITCAT_I486_SELFTEST;
  } else {
    // Interrupts, DMA, device reads and (R4400) Count reads, in a run short enough to replay
    // once per edit.
    request.workloads = "io";
    request.seed = 5;
    request.max_traced = 150'000;
  }
  c.cat_path = absl::StrCat(::testing::TempDir(), "/every-field-", machine,
                            from_reset ? "-reset-" : "-", getpid(), ".cat");
  auto run = (*system)->capture(request, c.cat_path);
  EXPECT_TRUE(run.ok()) << run.status();
  auto reader = cat::CatReader::Open(c.cat_path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto x = systems::Extract(**reader);
  EXPECT_TRUE(x.ok()) << x.status();
  c.x = *std::move(x);
  return c;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What a replay of (ims, aes) gave: refused or diverged, a CAT verify rejects, or both traces.
struct Outcome {
  bool rejected = false;
  std::string why;
  std::string trace, detailed;  // the -o text trace and the --format text trace
};

Outcome Replay(const Capture& capture, const ims::InitialMachineState& ims,
               const aes::EventSchedule& aes, bool detailed_trace = true) {
  const std::string base = absl::StrCat(::testing::TempDir(), "/every-field-", getpid());
  Outcome o;
  {
    auto trace = traces::OpenOutput(base + ".txt");
    auto detailed = traces::OpenWriter(traces::Format::kText, base + ".detailed.txt");
    EXPECT_TRUE(trace.ok() && detailed.ok());
    ReplayOptions options;
    options.trace = trace->get();
    if (detailed_trace) options.sink = detailed->get();
    auto v = systems::ReplayAgainst(capture.cat_path, ims, aes, options, nullptr);
    if (!v.ok() || !v->identical) {
      o.rejected = true;
      o.why = v.ok() ? v->report : std::string(v.status().message());
      return o;
    }
    EXPECT_TRUE((*trace)->Close().ok());
    if (detailed_trace) {
      EXPECT_TRUE((*detailed)->Finish().ok());
    }
  }
  o.trace = ReadFile(base + ".txt");
  if (detailed_trace) o.detailed = ReadFile(base + ".detailed.txt");
  return o;
}

// Edit `variant` (0 or 1) of a scalar field: a different value of its type. Integers get their
// lowest bit flipped, or bits 3 and 7 (a pending interrupt line moved: 0x80 becomes 0x08).
constexpr int kVariants = 2;
void Edit(Message& m, const FieldDescriptor* f, int index, int variant) {
  const uint64_t flip = variant == 0 ? 1 : 0x88;
  const Reflection* r = m.GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v = rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
      rep ? r->SetRepeatedUInt64(&m, f, index, v ^ flip) : r->SetUInt64(&m, f, v ^ flip);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v = rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
      rep ? r->SetRepeatedUInt32(&m, f, index, v ^ flip) : r->SetUInt32(&m, f, v ^ flip);
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL:
      rep ? r->SetRepeatedBool(&m, f, index, !r->GetRepeatedBool(m, f, index))
          : r->SetBool(&m, f, !r->GetBool(m, f));
      break;
    case FieldDescriptor::CPPTYPE_ENUM: {
      int v = rep ? r->GetRepeatedEnumValue(m, f, index) : r->GetEnumValue(m, f);
      const int next = (v + 1 + variant) % f->enum_type()->value_count();
      rep ? r->SetRepeatedEnumValue(&m, f, index, next) : r->SetEnumValue(&m, f, next);
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string v = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      if (f->type() == FieldDescriptor::TYPE_BYTES && !v.empty()) {
        v[variant == 0 ? v.size() / 2 : v.size() - 1] ^= static_cast<char>(flip);
      } else {
        v += variant == 0 ? "x" : "y";
      }
      rep ? r->SetRepeatedString(&m, f, index, v) : r->SetString(&m, f, v);
      break;
    }
    default:
      ADD_FAILURE() << f->full_name() << ": a field type this test cannot edit";
  }
}

// A field to edit: the steps from the root (field, element index or -1), the last one scalar.
using FieldPath = std::vector<std::pair<const FieldDescriptor*, int>>;

std::string Name(const FieldPath& path) {
  std::string s;
  for (const auto& [f, k] : path) {
    absl::StrAppend(&s, s.empty() ? "" : ".", f->name());
    if (k >= 0) absl::StrAppend(&s, "[", k, "]");
  }
  return s;
}

// Every scalar field (every element of a repeated one), recursing into messages (the first, the
// middle and the last element of a repeated one; a message field not set is set and edited
// inside, which for a oneof member switches the oneof).
void CollectFields(const Message& m, FieldPath& at, std::vector<FieldPath>& out) {
  const Reflection* r = m.GetReflection();
  for (int i = 0; i < m.GetDescriptor()->field_count(); ++i) {
    const FieldDescriptor* f = m.GetDescriptor()->field(i);
    const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
    std::vector<int> picks;
    if (!f->is_repeated()) {
      picks = {-1};
    } else if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      for (int k = 0; k < n; ++k) picks.push_back(k);
    } else if (n > 0) {
      picks = {0, n / 2, n - 1};
      picks.erase(std::unique(picks.begin(), picks.end()), picks.end());
    }
    for (int k : picks) {
      at.push_back({f, k});
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
        out.push_back(at);
      } else {
        const Message& sub = k < 0 ? r->GetMessage(m, f) : r->GetRepeatedMessage(m, f, k);
        CollectFields(sub, at, out);
      }
      at.pop_back();
    }
  }
}

void Apply(Message& root, const FieldPath& path, int variant) {
  Message* m = &root;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const auto& [f, k] = path[i];
    m = k < 0 ? m->GetReflection()->MutableMessage(m, f)
              : m->GetReflection()->MutableRepeatedMessage(m, f, k);
  }
  Edit(*m, path.back().first, path.back().second, variant);
}

class EveryField : public ::testing::TestWithParam<Traced> {
 protected:
  const Capture& capture() const { return Captured(GetParam()); }
  bool from_reset() const { return std::get<1>(GetParam()); }
  const Outcome& baseline() const {
    static std::map<Traced, Outcome>* outcomes = new std::map<Traced, Outcome>;
    auto it = outcomes->find(GetParam());
    if (it == outcomes->end()) {
      it = outcomes->emplace(GetParam(), Replay(capture(), capture().x.ims, capture().x.aes)).first;
    }
    return it->second;
  }

  // Replays with the edit; a replay that passes verify must write the unedited traces.
  // `detailed`: compare the --format text trace too (loaded and stored values).
  void Check(const std::string& field, const ims::InitialMachineState& ims,
             const aes::EventSchedule& aes, bool detailed, int& rejected) const {
    Outcome o = Replay(capture(), ims, aes, detailed);
    if (o.rejected) {
      ++rejected;
      return;
    }
    EXPECT_TRUE(o.trace == baseline().trace && (!detailed || o.detailed == baseline().detailed))
        << "edited " << field << ": replay and verify pass, but the instruction trace differs";
  }
};

TEST_P(EveryField, AesEditsChangeNoTraceThatVerifyPasses) {
  ASSERT_FALSE(baseline().rejected) << baseline().why;
  const aes::EventSchedule& aes = capture().x.aes;
  if (from_reset()) {
    // From reset: the program's device writes (and, on the i486, its timer's interrupts).
    ASSERT_GT(aes.device_io_size(), 2);
  } else {
    ASSERT_GT(aes.interrupts_size(), 2);
    ASSERT_GT(aes.dma_size(), 2);
    ASSERT_GT(aes.device_io_size(), 2);
  }
  std::vector<FieldPath> fields;
  FieldPath at;
  CollectFields(aes, at, fields);
  int rejected = 0;
  for (const FieldPath& path : fields) {
    for (int variant = 0; variant < kVariants; ++variant) {
      aes::EventSchedule edited = aes;
      Apply(edited, path, variant);
      Check(absl::StrCat("AES ", Name(path), " (edit ", variant, ")"), capture().x.ims, edited,
            /*detailed=*/true, rejected);
    }
  }
  EXPECT_GT(rejected, static_cast<int>(fields.size()));  // most edits are caught
}

TEST_P(EveryField, ImsEditsChangeNoTraceThatVerifyPasses) {
  ASSERT_FALSE(baseline().rejected) << baseline().why;
  const ims::InitialMachineState& ims = capture().x.ims;
  ASSERT_EQ(ims.start().from_reset(), from_reset());
  std::vector<FieldPath> fields;
  FieldPath at;
  CollectFields(ims, at, fields);
  int rejected = 0;
  // The values too (the detailed trace): a register that never reaches the bus within the trace
  // is still compared, in the state dump replay writes ahead of the regenerated records, or
  // (from reset) with the machine's reset state.
  for (const FieldPath& path : fields) {
    for (int variant = 0; variant < kVariants; ++variant) {
      ims::InitialMachineState edited = ims;
      Apply(edited, path, variant);
      Check(absl::StrCat("IMS ", Name(path), " (edit ", variant, ")"), edited, capture().x.aes,
            /*detailed=*/true, rejected);
    }
  }
  EXPECT_GT(rejected, 0);
}

INSTANTIATE_TEST_SUITE_P(Captures, EveryField,
                         ::testing::Combine(::testing::Values("r4400", "i486"), ::testing::Bool()),
                         [](const auto& info) {
                           return absl::StrCat(std::get<0>(info.param), std::get<1>(info.param)
                                                                            ? "FromReset"
                                                                            : "GuestKernel");
                         });

}  // namespace
}  // namespace citcat::replay
