// Record layouts of the ZIP format (PKWARE APPNOTE 6.3.x, sections 4.3 and
// 4.5), as the constants the reader and its tests share.
#pragma once

#include <cstdint>

namespace sb::zip::format {

constexpr std::uint32_t kLocalSig = 0x04034b50;       // "PK\3\4"
constexpr std::uint32_t kCentralSig = 0x02014b50;     // "PK\1\2"
constexpr std::uint32_t kEocdSig = 0x06054b50;        // "PK\5\6"
constexpr std::uint32_t kEocd64Sig = 0x06064b50;      // "PK\6\6"
constexpr std::uint32_t kLocatorSig = 0x07064b50;     // "PK\6\7"
constexpr std::uint32_t kDescriptorSig = 0x08074b50;  // "PK\7\10"

constexpr std::uint64_t kLocalSize = 30;    // fixed part of a local header
constexpr std::uint64_t kCentralSize = 46;  // fixed part of a central header
constexpr std::uint64_t kEocdSize = 22;     // EOCD without its comment
constexpr std::uint64_t kLocatorSize = 20;
constexpr std::uint64_t kEocd64Size = 56;  // ZIP64 EOCD without extensible data
constexpr std::uint64_t kMaxComment = 0xFFFF;

// A 16- or 32-bit field holding all ones: the real value is in the ZIP64
// extra field or end record.
constexpr std::uint16_t kZip64Marker16 = 0xFFFF;
constexpr std::uint32_t kZip64Marker32 = 0xFFFFFFFF;
constexpr std::uint16_t kExtraZip64 = 0x0001;
constexpr std::uint16_t kExtraUnicodePath = 0x7075;

constexpr std::uint16_t kFlagEncrypted = 1u << 0;
constexpr std::uint16_t kFlagDescriptor = 1u << 3;
constexpr std::uint16_t kFlagUtf8 = 1u << 11;

constexpr std::uint16_t kStored = 0;
constexpr std::uint16_t kDeflated = 8;

constexpr std::uint8_t kMadeByUnix = 3;
constexpr std::uint32_t kUnixTypeMask = 0170000;
constexpr std::uint32_t kUnixSymlink = 0120000;
constexpr std::uint32_t kUnixRegular = 0100000;
constexpr std::uint32_t kUnixDirectory = 0040000;

}  // namespace sb::zip::format
