// The registry of traced systems: everything the pipeline's shared code needs to know of one
// machine, found by the machine a CAT or an IMS names. Adding a machine is adding one entry
// (docs/adding-a-machine.md); extract, replay, traces, archive and the CLI name no machine.
#ifndef CITCAT_SYSTEMS_SYSTEM_H_
#define CITCAT_SYSTEMS_SYSTEM_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "aes/aes.pb.h"
#include "aes/schedule.h"
#include "cat_parser/reader.h"
#include "cat_parser/record.h"
#include "extract/contract.h"
#include "extract/extractor.h"
#include "ims/ims.pb.h"
#include "replay/replay.h"
#include "replay/verify.h"

namespace citcat::systems {

// What `citcat capture` asks of a traced system.
struct CaptureRequest {
  std::string workloads;  // comma-separated workload names; empty: the default mix
  // A program to run instead: an ELF, or C (and assembly) files built with the SDK, in link order.
  std::vector<std::string> program;
  std::string cflags;  // more compiler options for those files (shell words)
  std::string kernel;  // the guest kernel ELF; empty: the one this build made
  std::string disk;    // the disk image with the workloads; empty: the one this build made
  // A bare-metal program traced from reset instead of the guest kernel: a raw ROM image or an
  // ELF (docs/adding-a-machine.md, "Traces from reset"); where in the ROM a raw image goes.
  std::string rom;
  std::optional<uint64_t> rom_address;
  // Linux instead of our own kernel (docs/machines/i486-linux.md): `kernel` is then its vmlinux,
  // `initramfs` its userland (empty: the ones this build made); from_boot begins the trace at the
  // kernel's first instruction instead of when the workloads start.
  bool linux_guest = false;
  bool from_boot = false;
  std::string initramfs;
  uint64_t seed = 1;        // of the outside world
  uint64_t max_traced = 0;  // instructions after the begin of the trace; 0: until the guest halts
  uint64_t memory_bytes = 32ull << 20;
  std::function<void(uint64_t instructions)> progress;  // now and then, may be empty
};

// What a capture did, in the terms of every traced system.
struct CaptureReport {
  std::string console;               // what the guest printed
  uint64_t instructions = 0;         // retired, boot included
  uint64_t traced_instructions = 0;  // retired since the begin of the trace
  uint64_t bus_records = 0, bus_bytes = 0;
  uint64_t interrupts = 0, dma_transfers = 0, device_reads = 0;
  uint64_t register_reads = 0;       // of registers the outside world sets (MIPS Count)
  const char* register_name = "";    // what those are called ("Count")
  uint64_t hook_instructions = 0;    // of the kernel's CITCAT hooks after the state dump
  std::string hooks;                 // what the hooks did, for the perturbation line
  uint64_t driver_instructions = 0;  // of the begin-of-trace driver
  bool from_reset = false;           // a bare-metal program traced from power-on: no hooks
  bool halted = false;               // the guest powered the machine off
  bool cut_short = false;            // max_traced ended the run before the guest halted
  // Neither: the processor stopped for good ("halted with interrupts off at EIP 0x...").
  std::string stopped;
};

struct Workload {
  std::string_view name;
  std::string_view description;
};

struct System {
  const char* name;         // "r4400": --machine, messages
  const char* title;        // "R4400": in sentences
  const char* description;  // one line for --help
  cat::Machine cat_machine;
  ims::Machine ims_machine;
  replay::ReplayMachine replay;
  // What extraction needs to know of the system's guest: its contract (extract/contract.h).
  std::function<std::unique_ptr<extract::SystemContract>()> make_contract;

  // The traced machine with its guest: runs a capture and writes the CAT to `output`.
  std::function<absl::StatusOr<CaptureReport>(const CaptureRequest& request,
                                              const std::string& output)>
      capture;
  std::span<const Workload> workloads;
  const char* default_mix;
  // Linux's userland, on a machine that runs Linux (capture --linux; empty elsewhere).
  std::span<const Workload> linux_workloads = {};
  const char* linux_default_mix = "";
  const char* linux_kernel = "";  // its vmlinux as this build made it
  const char* guest_kernel;       // the guest kernel ELF this build made ("" if none)
  // The trace address of a symbol of a guest kernel ELF (the R4400 sign-extends 32-bit ones).
  std::function<uint64_t(uint64_t elf_value, bool elf64)> kernel_address;
  // Whether `last`, the last record of a run, is the guest powering the machine off: a trace
  // that ends otherwise was cut short (capture --instructions).
  std::function<bool(const cat::CatHeader& header, const cat::BusRecord& last)> powers_off;
  // Instructions of the guest kernel's CITCAT hooks, estimated from a schedule (0: unknown).
  std::function<uint64_t(const aes::EventSchedule& aes)> hook_instructions;
};

// Every system, in the order --help lists them.
std::span<const System> All();
// The system a --machine name, a CAT header or an IMS names; a one-line error if none.
absl::StatusOr<const System*> ByName(absl::string_view name);
absl::StatusOr<const System*> ForCat(cat::Machine machine);
absl::StatusOr<const System*> ForIms(const ims::InitialMachineState& ims);
// "r4400, i486": the names, for usage lines.
std::string Names();

// Replay of an IMS under an AES on the system the IMS names (replay::Replay).
absl::StatusOr<replay::ReplaySummary> Replay(const ims::InitialMachineState& ims,
                                             const aes::Schedule& aes,
                                             const replay::ReplayOptions& options);

// replay::ReplayAgainst and replay::CompareCats on the system the IMS or the original CAT names.
absl::StatusOr<replay::VerifyResult> ReplayAgainst(const std::string& original,
                                                   const ims::InitialMachineState& ims,
                                                   const aes::Schedule& aes,
                                                   const replay::ReplayOptions& options,
                                                   replay::ReplaySummary* summary);
absl::StatusOr<replay::VerifyResult> CompareCats(const std::string& original,
                                                 const std::string& regenerated);

// Extraction of a CAT on the system its header names (extract::Extract with its contract).
absl::StatusOr<extract::Extraction> Extract(cat::CatReader& reader,
                                            const std::function<void()>& after_record = {},
                                            aes::ScheduleWriter* events = nullptr);

// The CAT header the system the IMS names writes.
absl::StatusOr<cat::CatHeader> CatHeaderFor(const ims::InitialMachineState& ims);

}  // namespace citcat::systems

#endif  // CITCAT_SYSTEMS_SYSTEM_H_
