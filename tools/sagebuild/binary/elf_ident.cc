// What the first 20 bytes of any ELF file say (class, byte order, type,
// machine), and the platform-tag spelling of its machine.
#include <string>

#include "sagebuild/binary/elf.h"
#include "sagebuild/binary/le.h"

namespace sb::binary {

std::string elf_machine_name(std::uint16_t m, bool is_64, bool little_endian) {
  switch (m) {
    case 3:
      return "i686";
    case 62:
      return "x86_64";
    case 183:
      return "aarch64";
    case 40:
      return "armv7l";
    case 21:
      return little_endian ? "ppc64le" : "ppc64";
    case 20:
      return "ppc";
    case 22:
      return is_64 ? "s390x" : "s390";
    case 243:
      return is_64 ? "riscv64" : "riscv32";
    case 258:
      return "loongarch64";
    case 190:
      return "cuda";
    default:
      return "em_" + std::to_string(m);
  }
}

std::string ElfIdent::describe() const {
  if (!is_elf) return "not an ELF file";
  return std::string(is_64 ? "ELF64" : "ELF32") + (little_endian ? " little-endian " : " big-endian ") + machine;
}

ElfIdent identify_elf(ByteSource& src) {
  ElfIdent id;
  std::uint8_t h[20];
  if (!src.read(0, h, sizeof h) || h[0] != 0x7f || h[1] != 'E' || h[2] != 'L' || h[3] != 'F') return id;
  id.is_elf = true;
  id.is_64 = h[4] == 2;
  id.little_endian = h[5] == 1;
  auto u16 = [&](int at) {
    return id.little_endian ? le16(h + at) : static_cast<std::uint16_t>((h[at] << 8) | h[at + 1]);
  };
  id.type = u16(16);
  id.machine_code = u16(18);
  id.machine = elf_machine_name(id.machine_code, id.is_64, id.little_endian);
  return id;
}

}  // namespace sb::binary
