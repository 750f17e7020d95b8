// The i486 operations and the one table of facts about each: what the decoder, the interpreter and
// the trace recorder all need to know about an operation regardless of how it was encoded. The
// decoder (decoder.h) adds what depends on the encoding: operand forms, sizes, the effective
// address, immediates and the registers those operands name.
#ifndef CITCAT_SIMCORE_X86_OPS_H_
#define CITCAT_SIMCORE_X86_OPS_H_

#include <cstdint>
#include <string_view>

namespace citcat::x86 {

// EFLAGS bits, at their architectural positions.
namespace flag {
inline constexpr uint32_t kCF = 1u << 0, kPF = 1u << 2, kAF = 1u << 4, kZF = 1u << 6, kSF = 1u << 7,
                          kTF = 1u << 8, kIF = 1u << 9, kDF = 1u << 10, kOF = 1u << 11,
                          kIOPL = 3u << 12, kNT = 1u << 14, kRF = 1u << 16, kVM = 1u << 17,
                          kAC = 1u << 18;
inline constexpr uint32_t kSZAPC = kSF | kZF | kAF | kPF | kCF;
inline constexpr uint32_t kOSZAPC = kOF | kSZAPC;
inline constexpr uint32_t kOSZAP = kOSZAPC & ~kCF;
inline constexpr uint32_t kSZP = kSF | kZF | kPF;
// Everything POPF/IRET/task switches may load (POPF leaves VM and RF alone at run time).
inline constexpr uint32_t kAll = kOSZAPC | kTF | kIF | kDF | kIOPL | kNT | kRF | kVM | kAC;
}  // namespace flag

// General registers by their encoding; a mask bit n stands for the whole 32-bit register n, so
// AH (encoding 4 in byte operations) counts as EAX.
enum Gpr : uint8_t { kEax, kEcx, kEdx, kEbx, kEsp, kEbp, kEsi, kEdi };
enum Seg : uint8_t { kEs, kCs, kSs, kDs, kFs, kGs, kNoSeg = 7 };
inline constexpr uint8_t kNoReg = 0xFF;

// Control-flow class of an instruction.
enum class Flow : uint8_t {
  kNone,
  kJcc,      // conditional near branch (Jcc rel)
  kJmp,      // near jump: rel, or indirect r/m
  kCall,     // near call: rel, or indirect r/m
  kRet,      // near return (RET, RET imm16)
  kJmpFar,   // far jump: ptr16:16/32 or m16:16/32 (may switch tasks or go through a gate)
  kCallFar,  // far call
  kRetFar,   // far return (RETF, RETF imm16)
  kInt,      // software interrupt: INT n, INT3, INT1, INTO (conditional on OF)
  kIret,     // IRET/IRETD
  kLoop,     // LOOP/LOOPE/LOOPNE/JCXZ: conditional on ECX (or CX)
  kRep,      // a string instruction with REP/REPE/REPNE: may run again at the same EIP
};

// What an operation does to its first (destination) operand, and other properties.
namespace attr {
inline constexpr uint16_t kDstR = 1 << 0;        // the first operand is read
inline constexpr uint16_t kDstW = 1 << 1;        // the first operand is written
inline constexpr uint16_t kSrcW = 1 << 2;        // the second operand is written too (XCHG, XADD)
inline constexpr uint16_t kLockable = 1 << 3;    // LOCK is allowed when the destination is memory
inline constexpr uint16_t kPrivileged = 1 << 4;  // CPL 0 only (or IOPL-sensitive: see docs)
inline constexpr uint16_t kFpu = 1 << 5;         // an x87 instruction (ESC D8-DF or WAIT)
inline constexpr uint16_t kString = 1 << 6;      // string instruction: REP applies
inline constexpr uint16_t kPush = 1 << 7;        // writes the stack implicitly
inline constexpr uint16_t kPop = 1 << 8;         // reads the stack implicitly
inline constexpr uint16_t kIo = 1 << 9;          // port I/O (IOPL / I/O bitmap checked)
inline constexpr uint16_t kNoAccess = 1 << 10;   // the memory operand is an address, not accessed
inline constexpr uint16_t kRepZ = 1 << 11;       // REPE/REPNE test ZF (CMPS, SCAS)
inline constexpr uint16_t kNoWait = 1 << 12;     // x87 control op that does not check for faults
inline constexpr uint16_t kRW = kDstR | kDstW;
}  // namespace attr

// What an x87 operation reads and writes of the register stack and the status word, numbered
// as the instruction names them (ST(0) the top before it runs; a load writes the new top). ST(i)
// is the register a form names, where it names one (not its memory forms).
namespace x87 {
inline constexpr uint16_t kReadsSt0 = 1 << 0, kReadsSti = 1 << 1, kReadsSt1 = 1 << 2,
                          kReadsSw = 1 << 3, kWritesSt0 = 1 << 4, kWritesSti = 1 << 5,
                          kWritesSt1 = 1 << 6, kWritesSw = 1 << 7;
// The destination: ST(i) where the form names it as its first operand, else ST(0).
inline constexpr uint16_t kWritesDst = 1 << 8;
}  // namespace x87

// Implicit general-register masks used by the table.
namespace imp {
inline constexpr uint8_t kA = 1 << kEax, kC = 1 << kEcx, kD = 1 << kEdx, kB = 1 << kEbx,
                         kSP = 1 << kEsp, kBP = 1 << kEbp, kSI = 1 << kEsi, kDI = 1 << kEdi;
inline constexpr uint8_t kAll = 0xFF;
}  // namespace imp

// The table: X(Name, "mnemonic", Flow, attributes, implicit GPRs read, implicit GPRs written,
// flags read, flags written, flags left undefined[, x87 registers read and written]). Mnemonics are
// Intel's (Capstone's where the two agree); one operation may have several encodings (ADD has six).
// Implicit registers are those of the widest form: the decoder drops EDX for byte MUL/DIV, adds ECX
// for REP, ... Undefined flags are also listed as written: the core sets them to values it
// documents.
// clang-format off
#define CITCAT_X86_OPS(X) \
  X(Invalid,  "(bad)",   kNone,    0, 0, 0, 0, 0, 0) \
  /* arithmetic and logic */ \
  X(Add,      "add",     kNone,    attr::kRW | attr::kLockable, 0, 0, 0, flag::kOSZAPC, 0) \
  X(Or,       "or",      kNone,    attr::kRW | attr::kLockable, 0, 0, 0, flag::kOSZAPC, flag::kAF) \
  X(Adc,      "adc",     kNone,    attr::kRW | attr::kLockable, 0, 0, flag::kCF, flag::kOSZAPC, 0) \
  X(Sbb,      "sbb",     kNone,    attr::kRW | attr::kLockable, 0, 0, flag::kCF, flag::kOSZAPC, 0) \
  X(And,      "and",     kNone,    attr::kRW | attr::kLockable, 0, 0, 0, flag::kOSZAPC, flag::kAF) \
  X(Sub,      "sub",     kNone,    attr::kRW | attr::kLockable, 0, 0, 0, flag::kOSZAPC, 0) \
  X(Xor,      "xor",     kNone,    attr::kRW | attr::kLockable, 0, 0, 0, flag::kOSZAPC, flag::kAF) \
  X(Cmp,      "cmp",     kNone,    attr::kDstR, 0, 0, 0, flag::kOSZAPC, 0) \
  X(Test,     "test",    kNone,    attr::kDstR, 0, 0, 0, flag::kOSZAPC, flag::kAF) \
  X(Inc,      "inc",     kNone,    attr::kRW | attr::kLockable, 0, 0, 0, flag::kOSZAP, 0) \
  X(Dec,      "dec",     kNone,    attr::kRW | attr::kLockable, 0, 0, 0, flag::kOSZAP, 0) \
  X(Not,      "not",     kNone,    attr::kRW | attr::kLockable, 0, 0, 0, 0, 0) \
  X(Neg,      "neg",     kNone,    attr::kRW | attr::kLockable, 0, 0, 0, flag::kOSZAPC, 0) \
  X(Mul,      "mul",     kNone,    attr::kDstR, imp::kA, imp::kA | imp::kD, 0, flag::kOSZAPC, flag::kSZAPC & ~flag::kCF) \
  X(Imul1,    "imul",    kNone,    attr::kDstR, imp::kA, imp::kA | imp::kD, 0, flag::kOSZAPC, flag::kSZAPC & ~flag::kCF) \
  X(Imul,     "imul",    kNone,    attr::kDstW, 0, 0, 0, flag::kOSZAPC, flag::kSZAPC & ~flag::kCF) \
  X(Div,      "div",     kNone,    attr::kDstR, imp::kA | imp::kD, imp::kA | imp::kD, 0, flag::kOSZAPC, flag::kOSZAPC) \
  X(Idiv,     "idiv",    kNone,    attr::kDstR, imp::kA | imp::kD, imp::kA | imp::kD, 0, flag::kOSZAPC, flag::kOSZAPC) \
  X(Daa,      "daa",     kNone,    0, imp::kA, imp::kA, flag::kAF | flag::kCF, flag::kOSZAPC, flag::kOF) \
  X(Das,      "das",     kNone,    0, imp::kA, imp::kA, flag::kAF | flag::kCF, flag::kOSZAPC, flag::kOF) \
  X(Aaa,      "aaa",     kNone,    0, imp::kA, imp::kA, flag::kAF, flag::kOSZAPC, flag::kOSZAP & ~flag::kAF) \
  X(Aas,      "aas",     kNone,    0, imp::kA, imp::kA, flag::kAF, flag::kOSZAPC, flag::kOSZAP & ~flag::kAF) \
  X(Aam,      "aam",     kNone,    0, imp::kA, imp::kA, 0, flag::kOSZAPC, flag::kOF | flag::kAF | flag::kCF) \
  X(Aad,      "aad",     kNone,    0, imp::kA, imp::kA, 0, flag::kOSZAPC, flag::kOF | flag::kAF | flag::kCF) \
  X(Cbw,      "cbw",     kNone,    0, imp::kA, imp::kA, 0, 0, 0)                       /* CBW/CWDE */ \
  X(Cwd,      "cwd",     kNone,    0, imp::kA, imp::kD, 0, 0, 0)                       /* CWD/CDQ */ \
  X(Salc,     "salc",    kNone,    0, 0, imp::kA, flag::kCF, 0, 0)                     /* undocumented D6 */ \
  /* shifts and rotates: OF is defined for a count of 1 only */ \
  X(Rol,      "rol",     kNone,    attr::kRW, 0, 0, 0, flag::kOF | flag::kCF, flag::kOF) \
  X(Ror,      "ror",     kNone,    attr::kRW, 0, 0, 0, flag::kOF | flag::kCF, flag::kOF) \
  X(Rcl,      "rcl",     kNone,    attr::kRW, 0, 0, flag::kCF, flag::kOF | flag::kCF, flag::kOF) \
  X(Rcr,      "rcr",     kNone,    attr::kRW, 0, 0, flag::kCF, flag::kOF | flag::kCF, flag::kOF) \
  X(Shl,      "shl",     kNone,    attr::kRW, 0, 0, 0, flag::kOSZAPC, flag::kOF | flag::kAF) \
  X(Shr,      "shr",     kNone,    attr::kRW, 0, 0, 0, flag::kOSZAPC, flag::kOF | flag::kAF) \
  X(Sar,      "sar",     kNone,    attr::kRW, 0, 0, 0, flag::kOSZAPC, flag::kOF | flag::kAF) \
  X(Shld,     "shld",    kNone,    attr::kRW, 0, 0, 0, flag::kOSZAPC, flag::kOF | flag::kAF) \
  X(Shrd,     "shrd",    kNone,    attr::kRW, 0, 0, 0, flag::kOSZAPC, flag::kOF | flag::kAF) \
  /* bit operations */ \
  X(Bt,       "bt",      kNone,    attr::kDstR, 0, 0, 0, flag::kOSZAPC & ~flag::kZF, flag::kOF | flag::kSF | flag::kAF | flag::kPF) \
  X(Bts,      "bts",     kNone,    attr::kRW | attr::kLockable, 0, 0, 0, flag::kOSZAPC & ~flag::kZF, flag::kOF | flag::kSF | flag::kAF | flag::kPF) \
  X(Btr,      "btr",     kNone,    attr::kRW | attr::kLockable, 0, 0, 0, flag::kOSZAPC & ~flag::kZF, flag::kOF | flag::kSF | flag::kAF | flag::kPF) \
  X(Btc,      "btc",     kNone,    attr::kRW | attr::kLockable, 0, 0, 0, flag::kOSZAPC & ~flag::kZF, flag::kOF | flag::kSF | flag::kAF | flag::kPF) \
  X(Bsf,      "bsf",     kNone,    attr::kDstW, 0, 0, 0, flag::kOSZAPC, flag::kOSZAPC & ~flag::kZF) \
  X(Bsr,      "bsr",     kNone,    attr::kDstW, 0, 0, 0, flag::kOSZAPC, flag::kOSZAPC & ~flag::kZF) \
  X(Setcc,    "set",     kNone,    attr::kDstW, 0, 0, 0, 0, 0)                          /* + cond */ \
  /* data movement */ \
  X(Mov,      "mov",     kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(MovSeg,   "mov",     kNone,    attr::kDstW, 0, 0, 0, 0, 0)                          /* to or from a segment register */ \
  X(MovCr,    "mov",     kNone,    attr::kDstW | attr::kPrivileged, 0, 0, 0, flag::kOSZAPC, flag::kOSZAPC) \
  X(MovDr,    "mov",     kNone,    attr::kDstW | attr::kPrivileged, 0, 0, 0, flag::kOSZAPC, flag::kOSZAPC) \
  X(MovTr,    "mov",     kNone,    attr::kDstW | attr::kPrivileged, 0, 0, 0, flag::kOSZAPC, flag::kOSZAPC) \
  X(Movzx,    "movzx",   kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Movsx,    "movsx",   kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Lea,      "lea",     kNone,    attr::kDstW | attr::kNoAccess, 0, 0, 0, 0, 0) \
  X(Xchg,     "xchg",    kNone,    attr::kRW | attr::kSrcW | attr::kLockable, 0, 0, 0, 0, 0) \
  X(Xadd,     "xadd",    kNone,    attr::kRW | attr::kSrcW | attr::kLockable, 0, 0, 0, flag::kOSZAPC, 0) \
  X(Cmpxchg,  "cmpxchg", kNone,    attr::kRW | attr::kLockable, imp::kA, imp::kA, 0, flag::kOSZAPC, 0) \
  X(Bswap,    "bswap",   kNone,    attr::kRW, 0, 0, 0, 0, 0) \
  X(Nop,      "nop",     kNone,    0, 0, 0, 0, 0, 0) \
  X(Xlat,     "xlatb",   kNone,    0, imp::kA | imp::kB, imp::kA, 0, 0, 0) \
  X(Lahf,     "lahf",    kNone,    0, 0, imp::kA, flag::kSZAPC, 0, 0) \
  X(Sahf,     "sahf",    kNone,    0, imp::kA, 0, 0, flag::kSZAPC, 0) \
  X(Lds,      "lds",     kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Les,      "les",     kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Lss,      "lss",     kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Lfs,      "lfs",     kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Lgs,      "lgs",     kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Bound,    "bound",   kNone,    attr::kDstR, 0, 0, 0, 0, 0) \
  X(Arpl,     "arpl",    kNone,    attr::kRW, 0, 0, 0, flag::kZF, 0) \
  /* stack */ \
  X(Push,     "push",    kNone,    attr::kDstR | attr::kPush, imp::kSP, imp::kSP, 0, 0, 0) \
  X(Pop,      "pop",     kNone,    attr::kDstW | attr::kPop, imp::kSP, imp::kSP, 0, 0, 0) \
  X(Pusha,    "pusha",   kNone,    attr::kPush, imp::kAll, imp::kSP, 0, 0, 0) \
  X(Popa,     "popa",    kNone,    attr::kPop, imp::kSP, imp::kAll, 0, 0, 0) \
  X(Pushf,    "pushf",   kNone,    attr::kPush, imp::kSP, imp::kSP, flag::kAll, 0, 0) \
  X(Popf,     "popf",    kNone,    attr::kPop, imp::kSP, imp::kSP, 0, flag::kAll, 0) \
  X(Enter,    "enter",   kNone,    attr::kPush, imp::kSP | imp::kBP, imp::kSP | imp::kBP, 0, 0, 0) \
  X(Leave,    "leave",   kNone,    attr::kPop, imp::kSP | imp::kBP, imp::kSP | imp::kBP, 0, 0, 0) \
  /* strings: the decoder adds ECX when a REP prefix is present */ \
  X(Movs,     "movs",    kNone,    attr::kString, imp::kSI | imp::kDI, imp::kSI | imp::kDI, flag::kDF, 0, 0) \
  X(Cmps,     "cmps",    kNone,    attr::kString | attr::kRepZ, imp::kSI | imp::kDI, imp::kSI | imp::kDI, flag::kDF, flag::kOSZAPC, 0) \
  X(Stos,     "stos",    kNone,    attr::kString, imp::kA | imp::kDI, imp::kDI, flag::kDF, 0, 0) \
  X(Lods,     "lods",    kNone,    attr::kString, imp::kSI, imp::kA | imp::kSI, flag::kDF, 0, 0) \
  X(Scas,     "scas",    kNone,    attr::kString | attr::kRepZ, imp::kA | imp::kDI, imp::kDI, flag::kDF, flag::kOSZAPC, 0) \
  X(Ins,      "ins",     kNone,    attr::kString | attr::kIo, imp::kD | imp::kDI, imp::kDI, flag::kDF, 0, 0) \
  X(Outs,     "outs",    kNone,    attr::kString | attr::kIo, imp::kD | imp::kSI, imp::kSI, flag::kDF, 0, 0) \
  X(In,       "in",      kNone,    attr::kDstW | attr::kIo, 0, 0, 0, 0, 0) \
  X(Out,      "out",     kNone,    attr::kDstR | attr::kIo, 0, 0, 0, 0, 0) \
  /* control transfer */ \
  X(Jcc,      "j",       kJcc,     0, 0, 0, 0, 0, 0)                                    /* + cond */ \
  X(Jmp,      "jmp",     kJmp,     attr::kDstR, 0, 0, 0, 0, 0) \
  X(Call,     "call",    kCall,    attr::kDstR | attr::kPush, imp::kSP, imp::kSP, 0, 0, 0) \
  X(Ret,      "ret",     kRet,     attr::kPop, imp::kSP, imp::kSP, 0, 0, 0) \
  X(JmpFar,   "ljmp",    kJmpFar,  attr::kDstR, 0, 0, 0, flag::kAll, flag::kAll) \
  X(CallFar,  "lcall",   kCallFar, attr::kDstR | attr::kPush, imp::kSP, imp::kSP, 0, flag::kAll, flag::kAll) \
  X(RetFar,   "retf",    kRetFar,  attr::kPop, imp::kSP, imp::kSP, 0, 0, 0) \
  X(Loop,     "loop",    kLoop,    0, imp::kC, imp::kC, 0, 0, 0) \
  X(Loope,    "loope",   kLoop,    0, imp::kC, imp::kC, flag::kZF, 0, 0) \
  X(Loopne,   "loopne",  kLoop,    0, imp::kC, imp::kC, flag::kZF, 0, 0) \
  X(Jcxz,     "jcxz",    kLoop,    0, imp::kC, 0, 0, 0, 0)                              /* JCXZ/JECXZ */ \
  X(Int,      "int",     kInt,     attr::kPush, imp::kSP, imp::kSP, 0, flag::kTF | flag::kIF | flag::kNT | flag::kRF | flag::kVM | flag::kAC, 0) \
  X(Int3,     "int3",    kInt,     attr::kPush, imp::kSP, imp::kSP, 0, flag::kTF | flag::kIF | flag::kNT | flag::kRF | flag::kVM | flag::kAC, 0) \
  X(Int1,     "int1",    kInt,     attr::kPush, imp::kSP, imp::kSP, 0, flag::kTF | flag::kIF | flag::kNT | flag::kRF | flag::kVM | flag::kAC, 0) \
  X(Into,     "into",    kInt,     attr::kPush, imp::kSP, imp::kSP, flag::kOF, flag::kTF | flag::kIF | flag::kNT | flag::kRF | flag::kVM | flag::kAC, 0) \
  X(Iret,     "iret",    kIret,    attr::kPop, imp::kSP, imp::kSP, flag::kNT | flag::kVM, flag::kAll, 0) \
  /* flags and processor control */ \
  X(Clc,      "clc",     kNone,    0, 0, 0, 0, flag::kCF, 0) \
  X(Stc,      "stc",     kNone,    0, 0, 0, 0, flag::kCF, 0) \
  X(Cmc,      "cmc",     kNone,    0, 0, 0, flag::kCF, flag::kCF, 0) \
  X(Cld,      "cld",     kNone,    0, 0, 0, 0, flag::kDF, 0) \
  X(Std,      "std",     kNone,    0, 0, 0, 0, flag::kDF, 0) \
  X(Cli,      "cli",     kNone,    attr::kPrivileged, 0, 0, flag::kIOPL | flag::kVM, flag::kIF, 0) \
  X(Sti,      "sti",     kNone,    attr::kPrivileged, 0, 0, flag::kIOPL | flag::kVM, flag::kIF, 0) \
  X(Hlt,      "hlt",     kNone,    attr::kPrivileged, 0, 0, 0, 0, 0) \
  X(Wait,     "wait",    kNone,    attr::kFpu, 0, 0, 0, 0, 0) \
  /* system */ \
  X(Sldt,     "sldt",    kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Str,      "str",     kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Lldt,     "lldt",    kNone,    attr::kDstR | attr::kPrivileged, 0, 0, 0, 0, 0) \
  X(Ltr,      "ltr",     kNone,    attr::kDstR | attr::kPrivileged, 0, 0, 0, 0, 0) \
  X(Verr,     "verr",    kNone,    attr::kDstR, 0, 0, 0, flag::kZF, 0) \
  X(Verw,     "verw",    kNone,    attr::kDstR, 0, 0, 0, flag::kZF, 0) \
  X(Sgdt,     "sgdt",    kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Sidt,     "sidt",    kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Lgdt,     "lgdt",    kNone,    attr::kDstR | attr::kPrivileged, 0, 0, 0, 0, 0) \
  X(Lidt,     "lidt",    kNone,    attr::kDstR | attr::kPrivileged, 0, 0, 0, 0, 0) \
  X(Smsw,     "smsw",    kNone,    attr::kDstW, 0, 0, 0, 0, 0) \
  X(Lmsw,     "lmsw",    kNone,    attr::kDstR | attr::kPrivileged, 0, 0, 0, 0, 0) \
  X(Invlpg,   "invlpg",  kNone,    attr::kNoAccess | attr::kPrivileged, 0, 0, 0, 0, 0) \
  X(Lar,      "lar",     kNone,    attr::kDstW, 0, 0, 0, flag::kZF, 0) \
  X(Lsl,      "lsl",     kNone,    attr::kDstW, 0, 0, 0, flag::kZF, 0) \
  X(Clts,     "clts",    kNone,    attr::kPrivileged, 0, 0, 0, 0, 0) \
  X(Invd,     "invd",    kNone,    attr::kPrivileged, 0, 0, 0, 0, 0) \
  X(Wbinvd,   "wbinvd",  kNone,    attr::kPrivileged, 0, 0, 0, 0, 0) \
  /* x87 (ESC D8-DF); the FPU piece owns their semantics */ \
  X(Fadd,     "fadd",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fmul,     "fmul",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fcom,     "fcom",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesSw) \
  X(Fcomp,    "fcomp",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesSw) \
  X(Fsub,     "fsub",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fsubr,    "fsubr",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fdiv,     "fdiv",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fdivr,    "fdivr",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Faddp,    "faddp",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fmulp,    "fmulp",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fcompp,   "fcompp",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kReadsSt1 | x87::kWritesSw) \
  X(Fsubp,    "fsubp",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fsubrp,   "fsubrp",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fdivp,    "fdivp",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fdivrp,   "fdivrp",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fiadd,    "fiadd",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fimul,    "fimul",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Ficom,    "ficom",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesSw) \
  X(Ficomp,   "ficomp",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesSw) \
  X(Fisub,    "fisub",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fisubr,   "fisubr",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fidiv,    "fidiv",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fidivr,   "fidivr",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesDst) \
  X(Fld,      "fld",     kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSti | x87::kWritesSt0) \
  X(Fst,      "fst",     kNone,    attr::kFpu | attr::kDstW, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSti) \
  X(Fstp,     "fstp",    kNone,    attr::kFpu | attr::kDstW, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSti) \
  X(Fild,     "fild",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSti | x87::kWritesSt0) \
  X(Fist,     "fist",    kNone,    attr::kFpu | attr::kDstW, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSti) \
  X(Fistp,    "fistp",   kNone,    attr::kFpu | attr::kDstW, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSti) \
  X(Fbld,     "fbld",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSti | x87::kWritesSt0) \
  X(Fbstp,    "fbstp",   kNone,    attr::kFpu | attr::kDstW, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSti) \
  X(Fxch,     "fxch",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesSt0 | x87::kWritesSti) \
  X(Fucom,    "fucom",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesSw) \
  X(Fucomp,   "fucomp",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesSw) \
  X(Fucompp,  "fucompp", kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kReadsSt1 | x87::kWritesSw) \
  X(Ffree,    "ffree",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kWritesSti) \
  X(Ffreep,   "ffreep",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kWritesSti)                          /* undocumented DF C0+i */ \
  X(Fnop,     "fnop",    kNone,    attr::kFpu, 0, 0, 0, 0, 0) \
  X(Fchs,     "fchs",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSt0) \
  X(Fabs,     "fabs",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSt0) \
  X(Ftst,     "ftst",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesSw) \
  X(Fxam,     "fxam",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSti | x87::kWritesSw) \
  X(Fld1,     "fld1",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSti | x87::kWritesSt0) \
  X(Fldl2t,   "fldl2t",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSti | x87::kWritesSt0) \
  X(Fldl2e,   "fldl2e",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSti | x87::kWritesSt0) \
  X(Fldpi,    "fldpi",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSti | x87::kWritesSt0) \
  X(Fldlg2,   "fldlg2",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSti | x87::kWritesSt0) \
  X(Fldln2,   "fldln2",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSti | x87::kWritesSt0) \
  X(Fldz,     "fldz",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSti | x87::kWritesSt0) \
  X(F2xm1,    "f2xm1",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSt0) \
  X(Fyl2x,    "fyl2x",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSt1 | x87::kWritesSt1) \
  X(Fptan,    "fptan",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSt0 | x87::kWritesSt1) \
  X(Fpatan,   "fpatan",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSt1 | x87::kWritesSt1) \
  X(Fxtract,  "fxtract", kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSt0 | x87::kWritesSt1) \
  X(Fprem1,   "fprem1",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSt1 | x87::kWritesSt0 | x87::kWritesSw) \
  X(Fdecstp,  "fdecstp", kNone,    attr::kFpu, 0, 0, 0, 0, 0) \
  X(Fincstp,  "fincstp", kNone,    attr::kFpu, 0, 0, 0, 0, 0) \
  X(Fprem,    "fprem",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSt1 | x87::kWritesSt0 | x87::kWritesSw) \
  X(Fyl2xp1,  "fyl2xp1", kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSt1 | x87::kWritesSt1) \
  X(Fsqrt,    "fsqrt",   kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSt0) \
  X(Fsincos,  "fsincos", kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSt0 | x87::kWritesSt1) \
  X(Frndint,  "frndint", kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSt0) \
  X(Fscale,   "fscale",  kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kReadsSt1 | x87::kWritesSt0) \
  X(Fsin,     "fsin",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSt0) \
  X(Fcos,     "fcos",    kNone,    attr::kFpu, 0, 0, 0, 0, 0, x87::kReadsSt0 | x87::kWritesSt0) \
  X(Fldenv,   "fldenv",  kNone,    attr::kFpu | attr::kNoWait, 0, 0, 0, 0, 0) \
  X(Fldcw,    "fldcw",   kNone,    attr::kFpu, 0, 0, 0, 0, 0) \
  X(Fnstenv,  "fnstenv", kNone,    attr::kFpu | attr::kDstW | attr::kNoWait, 0, 0, 0, 0, 0) \
  X(Fnstcw,   "fnstcw",  kNone,    attr::kFpu | attr::kDstW | attr::kNoWait, 0, 0, 0, 0, 0) \
  X(Frstor,   "frstor",  kNone,    attr::kFpu, 0, 0, 0, 0, 0) \
  X(Fnsave,   "fnsave",  kNone,    attr::kFpu | attr::kDstW | attr::kNoWait, 0, 0, 0, 0, 0) \
  X(Fnstsw,   "fnstsw",  kNone,    attr::kFpu | attr::kDstW | attr::kNoWait, 0, 0, 0, 0, 0, x87::kReadsSw) \
  X(Fnclex,   "fnclex",  kNone,    attr::kFpu | attr::kNoWait, 0, 0, 0, 0, 0) \
  X(Fninit,   "fninit",  kNone,    attr::kFpu | attr::kNoWait, 0, 0, 0, 0, 0)
// clang-format on

enum class Op : uint16_t {
#define CITCAT_X86_OP_ENUM(name, ...) k##name,
  CITCAT_X86_OPS(CITCAT_X86_OP_ENUM)
#undef CITCAT_X86_OP_ENUM
      kCount
};

struct OpFacts {
  std::string_view mnemonic;
  Flow flow;
  uint16_t attrs;       // attr::k*
  uint8_t gpr_read;     // implicit general registers read (mask by Gpr)
  uint8_t gpr_written;  // implicit general registers written
  uint32_t flags_read;  // EFLAGS bits read (Jcc/SETcc: see FlagsRead in decoder.h)
  uint32_t flags_written;
  uint32_t flags_undefined;  // subset of flags_written whose value the manual leaves undefined
  uint16_t x87;              // x87::k*: the register stack and status word read and written
};

// The facts of one operation (constant, from the table above).
const OpFacts& Facts(Op op);
inline std::string_view Mnemonic(Op op) { return Facts(op).mnemonic; }

}  // namespace citcat::x86

#endif  // CITCAT_SIMCORE_X86_OPS_H_
