// Machine-neutral questions about an AES, answered from the schema.
#ifndef CITCAT_AES_AES_UTIL_H_
#define CITCAT_AES_AES_UTIL_H_

#include <cstdint>
#include <string>

#include "aes/aes.pb.h"

namespace citcat::aes {

// The one format version of aes.pb this build writes and reads (docs/ims-aes.md, "Versions").
inline constexpr uint32_t kFormatVersion = 1;

// A register's name in messages and statistics: the schema's name without its prefixes, as the
// manuals write it ("Count" for REGISTER_MIPS_COUNT).
std::string RegisterReadName(RegisterRead::Register reg);

}  // namespace citcat::aes

#endif  // CITCAT_AES_AES_UTIL_H_
