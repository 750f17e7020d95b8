// Replay: re-executes a traced processor from its initial machine state (IMS) under its
// asynchronous event schedule (AES), with no access to the CAT, and regenerates the CAT's records
// as a by-product. Any disagreement between the schedule and the execution is a divergence.
// See docs/replay.md.
#ifndef CITCAT_REPLAY_REPLAY_H_
#define CITCAT_REPLAY_REPLAY_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aes/aes.pb.h"
#include "aes/schedule.h"
#include "cat_parser/record.h"
#include "cat_parser/writer.h"
#include "ims/ims.pb.h"
#include "replay/core_adapter.h"
#include "replay/divergence.h"
#include "simcore/instruction_log.h"
#include "traces/output.h"
#include "traces/sink.h"

namespace citcat::replay {

// A piece of a replay that replays alone (docs/archive-format.md, "Segments"): the machine at
// an instruction boundary, the first-touch image from there on, and the schedule's events up to
// where the next piece begins.
struct Segment {
  ims::InitialMachineState ims;
  aes::EventSchedule aes;
};

// One instruction the core started (ReplayOptions::on_instructions).
using ExecutedInstruction = simcore::LoggedInstruction;

struct ReplayOptions {
  // Receives every regenerated bus record, in bus order (may be null).
  cat::CatWriter* regenerated = nullptr;
  // The text instruction trace, one line per instruction (may be null: replay then runs the core
  // in large slices without looking at single instructions, which is much faster).
  // Its Close() is the caller's.
  traces::ByteOutput* trace = nullptr;
  // Receives one record per executed instruction (docs/trace-formats.md), like `trace` on the
  // path that looks at single instructions (may be null). Its Finish() is the caller's.
  traces::TraceSink* sink = nullptr;
  // Also receives every regenerated record (e.g. to compare it with the original on the fly); a
  // non-OK status stops the replay and is returned.
  std::function<absl::Status(const cat::BusRecord& record)> on_record;
  // Sees every instruction the core starts, in order, as the text trace lists them: its PC and
  // its bytes as they lie in memory, in fetch order, whatever the machine's instruction length (a
  // faulting one appears again when re-executed). In batches, each handed over as it fills and
  // the last when the replay ends, so that a consumer costs one call per batch, not one per
  // instruction. Setting it makes replay look at single instructions, as a trace does, unless
  // the core logs them itself from its fast paths (both cores do, when there is no trace and no
  // sink: CoreAdapter::LogInstructions).
  std::function<void(std::span<const ExecutedInstruction> batch)> on_instructions;
  // With every regenerated record, the instructions retired so far (bus bytes against
  // instructions executed); costs nothing per instruction.
  std::function<void(const cat::BusRecord& record, uint64_t instructions)> on_record_retired;
  // Cuts the replay into segments: after the first step at or beyond each of these instruction
  // counts (ascending) that makes a bus transaction. Each segment is handed to on_segment, in
  // order, once it is complete (the last after the replay's end); a non-OK status stops the
  // replay and is returned. The first segment's IMS is the replay's own.
  std::vector<uint64_t> cut_at_instructions;
  // The same, after the first step at or beyond each of these counts of CPU bus transactions
  // (ascending): what a replay that does not know its instruction count beforehand can cut by,
  // from the schedule's end point (citcat pack's segment starts).
  std::vector<uint64_t> cut_at_cpu_transactions;
  std::function<absl::Status(Segment segment)> on_segment;
  // The instructions the replay retires, when known beforehand (an archive's manifest records
  // them): running past them is a divergence. Without it, an end point that lies (a damaged or
  // hostile AES) would keep an idle loop spinning until its branch count came round.
  uint64_t max_instructions = ~uint64_t{0};
  // Receives every interrupt of the schedule as it is taken, in order, keyed by only what replay
  // needed to find its boundary: the branch count, the PC and the vector or Cause.IP always; on
  // the i486, `steps_after_arrival` where the core reached the PC earlier in the same straight
  // line (a REP instruction between iterations) in place of ECX and the CAT record; on the R4400,
  // Cause.BD as `delay_slot` instead of the record it came from. A schedule with these keys
  // replays the same (docs/ims-aes.md, "Interrupts in columns").
  std::function<void(const aes::Interrupt& key)> on_interrupt_key;
};

struct ReplaySummary {
  uint64_t instructions = 0;  // retired instructions replayed
  uint64_t steps = 0;         // instructions plus exception and interrupt entries
  uint64_t records = 0;       // bus records regenerated (CPU and DMA)
  uint64_t interrupts = 0;
  uint64_t dma = 0;
  uint64_t device_accesses = 0;
  uint64_t register_reads = 0;
  uint64_t end_branch_count = 0;
  double seconds = 0;  // wall time of the replay loop
};

// What replay needs of one traced system; the registry of machines (systems/) has one each.
struct ReplayMachine {
  ims::Machine machine = ims::MACHINE_UNSPECIFIED;
  CoreAdapterFactory make_core;
  // The CAT header the traced system writes, rebuilt from the IMS (its memory map, devices and
  // reserved areas).
  std::function<cat::CatHeader(const ims::InitialMachineState&)> header;
  // Whether `record` ends the begin-of-trace state dump in a CAT with `header`: replay
  // regenerates the records after it.
  std::function<bool(const cat::CatHeader& header, const cat::BusRecord& record)> starts_after;
  // The begin-of-trace state dump as `ims` implies it: the begin marker, a store of every value
  // the IMS takes from the dump, and last the record that ends the dump (`starts_after` holds for
  // it). Replay writes these to the regenerated CAT ahead of the records it regenerates, so that
  // verify compares the IMS's registers with the original's dump. An IMS that no dump could have
  // produced is an InvalidArgument error. May be empty (no dump: replay writes none).
  std::function<absl::StatusOr<std::vector<cat::OwnedRecord>>(const cat::CatHeader& header,
                                                              const ims::InitialMachineState& ims)>
      state_dump;
  // The processor at power-on in a system with `header`, into the `cpu` oneof of `ims`: an IMS
  // of a trace from reset (start.from_reset) must hold exactly these registers, or replay refuses
  // it, since no state dump in the CAT could show the difference. Empty: the machine cannot be
  // traced from reset.
  std::function<absl::Status(const cat::CatHeader& header, ims::InitialMachineState& ims)>
      reset_state = nullptr;
};

// Replays a trace of `machine`. A divergence is returned as an Aborted status whose message is
// one paragraph: the CAT record index, the instruction count, the PC, what was expected and what
// happened, and the last instructions executed (see DivergenceRecord). Malformed input is
// InvalidArgument.
absl::StatusOr<ReplaySummary> Replay(const ReplayMachine& machine,
                                     const ims::InitialMachineState& ims, const aes::Schedule& aes,
                                     const ReplayOptions& options);

}  // namespace citcat::replay

#endif  // CITCAT_REPLAY_REPLAY_H_
