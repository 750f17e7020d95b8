#include "archive/stats.h"

#include <zstd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "aes/aes_util.h"
#include "aes/interrupt_columns.h"
#include "cat_parser/record.h"
#include "replay/replay.h"
#include "systems/system.h"
#include "traces/record.h"
#include "traces/sink.h"

namespace citcat::archive {
uint64_t ZstdSize(const std::string& bytes) {
  if (bytes.empty()) return 0;
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 19);
  return ZSTD_isError(n) ? bytes.size() : n;
}

namespace {

PartSize Size(std::string part, uint64_t count, const std::string& bytes) {
  return {std::move(part), count, bytes.size(), ZstdSize(bytes)};
}

// "12.3 M" style numbers for axis labels.
std::string Short(double v) {
  if (v >= 1e9) return absl::StrFormat("%.3g G", v / 1e9);
  if (v >= 1e6) return absl::StrFormat("%.3g M", v / 1e6);
  if (v >= 1e3) return absl::StrFormat("%.3g k", v / 1e3);
  return absl::StrFormat("%.3g", v);
}

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

namespace {

// Counts the replayed instructions by the privilege they ran at.
class ModeCounter final : public traces::TraceSink {
 public:
  explicit ModeCounter(uint64_t (&counts)[3]) : counts_(counts) {}
  absl::Status Consume(const traces::Record& r) override {
    ++counts_[static_cast<int>(r.mode)];
    return absl::OkStatus();
  }

 private:
  uint64_t (&counts_)[3];
};

}  // namespace

absl::StatusOr<Stats> ComputeStats(const ims::InitialMachineState& ims,
                                   const aes::EventSchedule& aes, size_t max_points) {
  Stats s;
  ModeCounter modes(s.mode_instructions);
  replay::ReplayOptions options;
  options.sink = &modes;
  max_points = std::max<size_t>(max_points, 2);
  uint64_t stride = 1;  // keep every stride-th record as a point: memory stays flat
  CurvePoint last;
  cat::BusRecord last_record;  // did the guest power off at the end?
  options.on_record_retired = [&](const cat::BusRecord& r, uint64_t instructions) {
    last_record = r;
    last_record.data = {};  // the bytes live only during the call
    const uint8_t kind = static_cast<uint8_t>(r.kind);
    ++s.kind_records[kind];
    s.kind_bytes[kind] += r.data.size();
    s.bus_bytes += r.data.size();
    last = {instructions, s.bus_bytes};
    if (s.records++ % stride == 0) {
      s.curve.push_back(last);
      if (s.curve.size() >= 2 * max_points) {
        // Halve the resolution: the even points are exactly the multiples of the new stride.
        size_t kept = 0;
        for (size_t i = 0; i < s.curve.size(); i += 2) s.curve[kept++] = s.curve[i];
        s.curve.resize(kept);
        stride *= 2;
      }
    }
  };
  absl::StatusOr<replay::ReplaySummary> summary = systems::Replay(ims, aes, options);
  if (!summary.ok()) return summary.status();
  s.instructions = summary->instructions;
  if (s.records > 0 && (s.curve.empty() || s.curve.back().bus_bytes != last.bus_bytes ||
                        s.curve.back().instructions != last.instructions)) {
    s.curve.push_back(last);
  }
  s.curve.push_back({s.instructions, s.bus_bytes});  // the end of the replayed run

  s.interrupts = aes.interrupts_size();
  s.dma = aes.dma_size();
  s.device_io = aes.device_io_size();
  std::vector<std::string> names;
  for (int reg = aes::RegisterRead::Register_MIN + 1; reg <= aes::RegisterRead::Register_MAX;
       ++reg) {
    if (!aes::RegisterRead::Register_IsValid(reg)) continue;
    uint64_t n = 0;
    for (const aes::RegisterRead& r : aes.register_reads()) n += r.register_() == reg;
    if (n == 0) continue;
    const std::string name = aes::RegisterReadName(static_cast<aes::RegisterRead::Register>(reg));
    s.register_reads.push_back({name, n});
    names.push_back(name);
  }
  aes::EventSchedule part;
  *part.mutable_register_reads() = aes.register_reads();
  s.sizes.push_back(
      Size(names.empty() ? "register echoes" : absl::StrCat(absl::StrJoin(names, "/"), " echoes"),
           aes.register_reads_size(), part.SerializeAsString()));
  part.Clear();
  *part.mutable_dma() = aes.dma();
  s.sizes.push_back(Size("DMA", aes.dma_size(), part.SerializeAsString()));
  // Interrupts as the AES stores them: in blocks of columns in an archive's (version 2).
  const bool in_blocks = aes.format_version() == aes::kPackedFormatVersion;
  aes::EventSchedule stored = aes;
  if (in_blocks) aes::PutInterruptsInBlocks(stored);
  part.Clear();
  *part.mutable_interrupts() = stored.interrupts();
  *part.mutable_interrupt_blocks() = stored.interrupt_blocks();
  s.sizes.push_back(Size(in_blocks ? "interrupts (columns)" : "interrupts", aes.interrupts_size(),
                         part.SerializeAsString()));
  part.Clear();
  *part.mutable_device_io() = aes.device_io();
  s.sizes.push_back(Size("device I/O", aes.device_io_size(), part.SerializeAsString()));
  s.sizes.push_back(Size("AES (all)", 1, stored.SerializeAsString()));
  s.sizes.push_back(Size("IMS", ims.memory_size(), ims.SerializeAsString()));
  const PartSize& a = s.sizes[s.sizes.size() - 2];
  const PartSize& i = s.sizes.back();
  s.sizes.push_back({"IMS + AES", 2, a.raw + i.raw, a.zstd + i.zstd});

  if (absl::StatusOr<const systems::System*> system = systems::ForIms(ims); system.ok()) {
    s.hook_instructions = (*system)->hook_instructions(aes);
    s.from_reset = ims.start().from_reset();
    absl::StatusOr<cat::CatHeader> header = systems::CatHeaderFor(ims);
    s.guest_halted = s.records > 0 && header.ok() && (*system)->powers_off &&
                     (*system)->powers_off(*header, last_record);
  }
  return s;
}

std::string FormatStats(const Stats& s, const std::string& source) {
  std::string out = absl::StrFormat(
      "%s: %d instructions replayed, %d bus records regenerated, %d data bytes "
      "(%.3f bus bytes per instruction)\n%s\nrecords by kind:\n",
      source, s.instructions, s.records, s.bus_bytes,
      s.instructions ? static_cast<double>(s.bus_bytes) / s.instructions : 0.0,
      s.guest_halted ? "the run ends with the guest halting\n"
                     : "the trace ends before the guest powered the machine off (cut short by "
                       "capture --instructions, or a processor halted for good)\n");
  for (int k = 0; k < 256; ++k) {
    if (s.kind_records[k] == 0) continue;
    absl::StrAppendFormat(&out, "  %-16s %12d records %14d bytes\n",
                          cat::KindName(static_cast<cat::RecordKind>(k)), s.kind_records[k],
                          s.kind_bytes[k]);
  }
  // As the instruction trace lists them: a REP string instruction once per iteration and a
  // faulting instruction once more when it runs again, so their sum exceeds the retired count.
  const uint64_t listed = s.mode_instructions[0] + s.mode_instructions[1] + s.mode_instructions[2];
  absl::StrAppend(&out, "\ninstructions by privilege, as the instruction trace lists them:");
  for (traces::Mode m : {traces::Mode::kKernel, traces::Mode::kSupervisor, traces::Mode::kUser}) {
    const uint64_t n = s.mode_instructions[static_cast<int>(m)];
    if (n == 0 && m == traces::Mode::kSupervisor) continue;
    absl::StrAppendFormat(&out, " %s %d (%.1f%%)%s", traces::ModeName(m), n,
                          listed ? 100.0 * n / listed : 0.0, m == traces::Mode::kUser ? "" : ",");
  }
  absl::StrAppendFormat(&out, "\nevents: %d interrupts, %d DMA transfers, %d device accesses",
                        s.interrupts, s.dma, s.device_io);
  for (const auto& [name, n] : s.register_reads)
    absl::StrAppendFormat(&out, ", %d %s reads", n, name);
  absl::StrAppend(&out, "\n\n");
  absl::StrAppendFormat(&out, "record sizes (Fig. 5):\n  %-20s %10s %14s %14s %12s\n", "part",
                        "entries", "raw bytes", "zstd bytes", "zstd B/Minstr");
  for (const PartSize& p : s.sizes) {
    absl::StrAppendFormat(&out, "  %-20s %10d %14d %14d %12.1f\n", p.part, p.count, p.raw, p.zstd,
                          s.instructions ? p.zstd * 1e6 / s.instructions : 0.0);
  }
  if (s.from_reset) {
    absl::StrAppend(&out, "\nperturbation: none (traced from reset: no kernel, no hooks)\n");
  } else if (s.hook_instructions > 0 && s.instructions > 0) {
    absl::StrAppendFormat(&out,
                          "\nperturbation: about %d hook instructions of the guest kernel's "
                          "CITCAT hooks, %.3f%% of the instructions\n",
                          s.hook_instructions, 100.0 * s.hook_instructions / s.instructions);
  } else {
    absl::StrAppend(&out,
                    "\nperturbation: not available (the events do not follow the guest "
                    "kernel's hooks)\n");
  }
  return out;
}

std::string CurveSvg(const std::vector<CurvePoint>& curve, const std::string& title) {
  constexpr double kWidth = 800, kHeight = 500, kLeft = 90, kRight = 30, kTop = 40, kBottom = 60;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  double max_x = 1, max_y = 1;
  for (const CurvePoint& p : curve) {
    max_x = std::max(max_x, static_cast<double>(p.instructions));
    max_y = std::max(max_y, static_cast<double>(p.bus_bytes));
  }
  auto x = [&](double v) { return kLeft + plot_w * v / max_x; };
  auto y = [&](double v) { return kTop + plot_h * (1 - v / max_y); };
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
      "viewBox=\"0 0 %g %g\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%g\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">%s</text>\n",
      kWidth, kHeight, kWidth, kHeight, kWidth / 2, XmlEscape(title));
  absl::StrAppendFormat(&svg, "<path d=\"M%g %g V%g H%g\" fill=\"none\" stroke=\"black\"/>\n",
                        kLeft, kTop, kTop + plot_h, kLeft + plot_w);
  for (int t = 0; t <= 4; ++t) {
    const double fx = max_x * t / 4, fy = max_y * t / 4;
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#ddd\"/>\n"
                          "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%s</text>\n"
                          "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%s</text>\n",
                          kLeft, y(fy), kLeft + plot_w, y(fy), x(fx), kTop + plot_h + 18, Short(fx),
                          kLeft - 6, y(fy) + 4, Short(fy));
  }
  absl::StrAppendFormat(
      &svg,
      "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">instructions executed</text>\n"
      "<text x=\"18\" y=\"%g\" text-anchor=\"middle\" transform=\"rotate(-90 18 %g)\">"
      "cumulative bus bytes (CAT record data)</text>\n",
      kLeft + plot_w / 2, kHeight - 16, kTop + plot_h / 2, kTop + plot_h / 2);
  svg += "<polyline fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"1.5\" points=\"";
  for (size_t i = 0; i < curve.size(); ++i) {
    absl::StrAppendFormat(&svg, "%s%.1f,%.1f", i ? " " : "",
                          x(static_cast<double>(curve[i].instructions)),
                          y(static_cast<double>(curve[i].bus_bytes)));
  }
  svg += "\"/>\n</svg>\n";
  return svg;
}

}  // namespace citcat::archive
