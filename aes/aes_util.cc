#include "aes/aes_util.h"

#include "absl/strings/ascii.h"

namespace citcat::aes {

std::string RegisterReadName(RegisterRead::Register reg) {
  std::string name = RegisterRead::Register_Name(reg);
  name = name.substr(name.rfind('_') + 1);
  for (size_t i = 1; i < name.size(); ++i) name[i] = absl::ascii_tolower(name[i]);
  return name;
}

}  // namespace citcat::aes
