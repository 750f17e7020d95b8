// The traced MIPS R4400 system's entry in the registry (docs/machines/r4400-system.md).
#ifndef CITCAT_SYSTEMS_R4400_H_
#define CITCAT_SYSTEMS_R4400_H_

#include "systems/system.h"

namespace citcat::systems {

System R4400();

}  // namespace citcat::systems

#endif  // CITCAT_SYSTEMS_R4400_H_
