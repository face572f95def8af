// A PE/COFF reader for the .pyd files in our Windows wheels: the target
// machine (which decides the wheel's platform tag), the DLLs it imports
// (torch, cudart, python3 - verify checks they match the row) and its
// sections (nvcc puts the CUDA fat binary in ".nv_fatb": ".nv_fatbin" cut
// to the 8 bytes a PE section name has).
//
// It reads from a bounded byte buffer and treats the input as hostile:
// every offset and size is checked before use, loops are capped, and a
// malformed file yields an error message, never a crash or an exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::platform {

enum class PeMachine : std::uint16_t {
  I386 = 0x014c,
  Amd64 = 0x8664,
  Arm64 = 0xaa64,
};

// "win32", "win_amd64", "win_arm64"; nullopt for any other machine value.
std::optional<std::string> platform_tag_for_machine(std::uint16_t machine);

struct PeSection {
  std::string name;            // up to 8 bytes, or the long name from the string table
  std::uint32_t virtual_address = 0;
  std::uint32_t virtual_size = 0;
  std::uint32_t raw_offset = 0;  // PointerToRawData
  std::uint32_t raw_size = 0;    // SizeOfRawData
};

struct PeImage {
  std::uint16_t machine = 0;
  bool pe32_plus = false;        // optional header magic 0x20b (64-bit)
  bool is_dll = false;           // IMAGE_FILE_DLL
  std::vector<PeSection> sections;
  std::vector<std::string> imported_dlls;  // import directory order, as written

  const PeSection* find_section(std::string_view name) const;
  // Case-insensitive, as the Windows loader matches DLL names.
  bool imports(std::string_view dll) const;
};

struct PeParse {
  std::optional<PeImage> image;
  std::string error;  // why not, when image is empty
};

// Caps that keep a hostile file from making us loop or allocate a lot.
struct PeLimits {
  std::size_t max_sections = 96;        // the Windows loader's own limit
  std::size_t max_imports = 4096;
  std::size_t max_name_length = 512;
};

PeParse parse_pe(std::string_view bytes, PeLimits limits = {});

}  // namespace sb::platform
