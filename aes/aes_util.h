// Machine-neutral questions about an AES, answered from the schema.
#ifndef CITCAT_AES_AES_UTIL_H_
#define CITCAT_AES_AES_UTIL_H_

#include <cstdint>
#include <string>

#include "aes/aes.pb.h"

namespace citcat::aes {

// The format versions of the AES this build writes and reads (docs/ims-aes.md, "Versions"): 1
// as extraction writes aes.pb, every interrupt a message; 2 as `citcat pack` stores it, the
// interrupts in blocks of columns, each keyed by only what replay needs.
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kPackedFormatVersion = 2;

// A register's name in messages and statistics: the schema's name without its prefixes, as the
// manuals write it ("Count" for REGISTER_MIPS_COUNT).
std::string RegisterReadName(RegisterRead::Register reg);

}  // namespace citcat::aes

#endif  // CITCAT_AES_AES_UTIL_H_
