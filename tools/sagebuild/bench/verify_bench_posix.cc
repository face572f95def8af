// sb_verify_bench [SIZE_MB [MEMBERS]]: writes a wheel of SIZE_MB (default
// 500) of pseudo-random (incompressible) bytes split over MEMBERS large
// members (default 4) with the pack writer, then verifies it in a child
// process and prints the throughput of the hashing pass and the child's
// peak RSS.  Run at 100 and 500 MB to see memory independent of size.
//
// The members are DEFLATED (the zip writer always deflates); on random data
// zlib emits stored blocks, so inflating is close to a copy and the time is
// dominated by SHA-256 and CRC-32 over every byte.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/pack/wheel_writer.h"
#include "sagebuild/verify/verify.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// xorshift64*: fast, deterministic, incompressible enough for deflate.
void write_random_file(const fs::path& path, std::uint64_t bytes, std::uint64_t seed) {
  std::ofstream out(path, std::ios::binary);
  std::vector<std::uint64_t> buf(1 << 17);  // 1 MiB
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::uint64_t done = 0; done < bytes;) {
    for (auto& w : buf) {
      x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
      w = x * 0x2545F4914F6CDD1Dull;
    }
    std::uint64_t n = std::min<std::uint64_t>(bytes - done, buf.size() * 8);
    out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(n));
    done += n;
  }
}

fs::path make_wheel(const fs::path& dir, std::uint64_t total, int members) {
  std::vector<sb::pack::PayloadFile> payload;
  for (int i = 0; i < members; ++i) {
    fs::path p = dir / ("blob" + std::to_string(i));
    write_random_file(p, total / members, i);
    payload.push_back({"benchpkg/data" + std::to_string(i) + ".bin", p, std::nullopt});
  }
  payload.push_back({"benchpkg/__init__.py", std::string("VALUE = 1\n"), std::nullopt});
  sb::pack::WheelSpec spec;
  spec.name = "benchpkg";
  spec.version = *sb::wheel::parse_version("1.0");
  spec.tags = {{"py3"}, {"none"}, {"any"}};
  auto result = sb::pack::write_wheel(spec, payload, {dir, sb::pack::kDefaultTimestamp});
  for (int i = 0; i < members; ++i) fs::remove(dir / ("blob" + std::to_string(i)));
  return result.path;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Where the time goes: the reader alone (inflate + CRC-32, no digest) and
// SHA-256 alone over memory, each in MB/s on this core.
void print_breakdown(const fs::path& wheel) {
  auto zip = sb::zip::Reader::open(wheel);
  std::uint64_t bytes = 0;
  auto t = Clock::now();
  for (std::size_t i = 0; i < zip->entries().size(); ++i)
    bytes += zip->read(i, [](const std::uint8_t*, std::size_t) { return true; }).bytes;
  double read_s = seconds_since(t);
  std::string chunk(1 << 20, '\x5a');
  sb::Sha256 sha;
  t = Clock::now();
  for (int i = 0; i < 512; ++i) sha.update(chunk);
  sha.finish();
  double sha_s = seconds_since(t);
  std::printf("breakdown: reader alone (inflate + CRC-32) %.0f MB/s; SHA-256 alone %.0f MB/s\n", bytes / 1e6 / read_s,
              512.0 * (1 << 20) / 1e6 / sha_s);
}

double cpu_seconds(const rusage& u) {
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t mb = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 500;
  int members = argc > 2 ? std::atoi(argv[2]) : 4;
  if (mb == 0 || members <= 0) {
    std::fprintf(stderr, "usage: sb_verify_bench [SIZE_MB>0 [MEMBERS>0]]\n");
    return 2;
  }
  fs::path dir = fs::temp_directory_path() / ("sb-verify-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto t0 = Clock::now();
  fs::path wheel = make_wheel(dir, mb << 20, members);
  double write_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("wheel: %s (%.1f MB on disk, %d deflated members of random bytes), written in %.2f s\n",
              wheel.filename().c_str(), fs::file_size(wheel) / 1e6, members, write_s);
  std::fflush(stdout);

  pid_t child = ::fork();
  if (child == 0) {  // verify alone, so its peak RSS is its own
    auto t1 = Clock::now();
    rusage before{}, after{};
    ::getrusage(RUSAGE_SELF, &before);
    auto report = sb::verify::verify_wheel(wheel, {});
    ::getrusage(RUSAGE_SELF, &after);
    double s = std::chrono::duration<double>(Clock::now() - t1).count();
    double cpu = cpu_seconds(after) - cpu_seconds(before);
    std::printf(
        "verify: %s (%zu findings), %llu bytes hashed in %.3f s wall = %.0f MB/s; "
        "%.3f s CPU (one thread) = %.0f MB/s per core\n",
        report.failed(false) ? "FAIL" : "OK", report.findings.size(),
        static_cast<unsigned long long>(report.hashed_bytes), s, report.hashed_bytes / 1e6 / s, cpu,
        report.hashed_bytes / 1e6 / cpu);
    std::fflush(stdout);
    std::_Exit(report.failed(false) ? 1 : 0);
  }
  int status = 0;
  rusage usage{};
  ::wait4(child, &status, 0, &usage);
  std::printf("verify peak RSS: %.1f MiB (getrusage ru_maxrss of the verifying process)\n", usage.ru_maxrss / 1024.0);
  print_breakdown(wheel);  // in the parent, so it does not count towards verify's RSS
  fs::remove_all(dir);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}
