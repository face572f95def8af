#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/common/os.h"

using namespace sb;

TEST_CASE("sha256 of known vectors") {
  CHECK(hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("urlsafe base64 without padding round-trips") {
  // RECORD hash of an empty file, as pip writes it.
  CHECK(urlsafe_b64_nopad(sha256("")) == "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\xfd"}) {
    std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
    std::string enc = urlsafe_b64_nopad(bytes), dec;
    CHECK(enc.find('=') == std::string::npos);
    REQUIRE(decode_urlsafe_b64_nopad(enc, dec));
    CHECK(dec == s);
  }
  std::string out;
  CHECK_FALSE(decode_urlsafe_b64_nopad("Zm9v=", out));  // padding is not allowed
  CHECK_FALSE(decode_urlsafe_b64_nopad("Zm+v", out));   // '+' is the other alphabet
  CHECK_FALSE(decode_urlsafe_b64_nopad("Zh", out));     // non-zero trailing bits
}

TEST_CASE("atomic output appears only on commit") {
  auto dir = std::filesystem::temp_directory_path() / "sb-common-test";
  std::filesystem::create_directories(dir);
  auto dest = dir / "out.txt";
  std::filesystem::remove(dest);
  {
    AtomicOutput o(dest);
    write_file_atomic(o.temp_path(), "partial");
    CHECK_FALSE(std::filesystem::exists(dest));
  }
  CHECK_FALSE(std::filesystem::exists(dest));
  write_file_atomic(dest, "done");
  CHECK(read_file(dest) == "done");
  CHECK_THROWS_AS(read_file(dir / "missing"), IoError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("config errors carry file:line:column") {
  ConfigError e({"matrix/build-matrix.yaml", 12, 5}, "unknown key 'pyton'");
  CHECK(std::string(e.what()) == "matrix/build-matrix.yaml:12:5: error: unknown key 'pyton'");
}

TEST_CASE("FileLock says once that it waits for another holder, then gets the lock") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("sb-lock-test-" + std::to_string(process_id()));
  std::filesystem::remove_all(dir);
  std::filesystem::path lock = dir / "work" / "default.lock";
  std::atomic<bool> held{false}, waited{false};
  std::optional<FileLock> first(std::in_place, lock);
  std::thread second([&] {
    FileLock l(lock, [&] { waited = true; });
    held = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(held);  // the first still holds it
  first.reset();
  second.join();
  CHECK(waited);
  CHECK(held);
  bool called = false;
  {
    FileLock free_lock(lock, [&] { called = true; });  // nobody holds it: no message
  }
  CHECK_FALSE(called);
  std::filesystem::remove_all(dir);  // after every lock is closed (Windows keeps open files)
}

TEST_CASE("check_output_dir: an empty name, a file, or a path under a file is refused by the option's name") {
  auto dir = std::filesystem::temp_directory_path() / ("sb-outdir-" + std::to_string(sb::process_id()));
  std::filesystem::create_directories(dir);
  write_file_atomic(dir / "file", "x");
  CHECK_NOTHROW(check_output_dir(dir, "--out"));
  CHECK_NOTHROW(check_output_dir(dir / "new" / "deeper", "--out"));
  CHECK_THROWS_WITH(check_output_dir("", "--out"), Catch::StartsWith("--out: expected a directory to write to"));
  CHECK_THROWS_WITH(check_output_dir(dir / "file", "--out"), Catch::Contains("exists and is not a directory"));
  CHECK_THROWS_WITH(check_output_dir(dir / "file" / "sub", "--out"),
                    Catch::Contains((dir / "file").string() + " is a file, not a directory"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("read_file_capped refuses a file over its cap, naming the option") {
  auto dir = std::filesystem::temp_directory_path() / ("sb-capped-" + std::to_string(sb::process_id()));
  std::filesystem::create_directories(dir);
  write_file_atomic(dir / "small", std::string(100, 'a'));
  write_file_atomic(dir / "big", std::string(200'000, 'a'));
  CHECK(read_file_capped(dir / "small", 100, "--x").size() == 100);
  CHECK_THROWS_WITH(read_file_capped(dir / "big", 100'000, "--x"),
                    Catch::StartsWith("--x " + (dir / "big").string() + ": larger than 100000 bytes"));
  CHECK_THROWS_AS(read_file_capped(dir / "missing", 10, "--x"), UsageError);
  std::filesystem::remove_all(dir);
}

#ifndef _WIN32
#include <sys/stat.h>

TEST_CASE("read_file_capped refuses a FIFO, a device and a directory before reading, at once") {
  auto dir = std::filesystem::temp_directory_path() / ("sb-operator-" + std::to_string(sb::process_id()));
  std::filesystem::create_directories(dir);
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  auto start = std::chrono::steady_clock::now();
  // No writer on the FIFO: a blocking open would hang here for ever.
  CHECK_THROWS_WITH(read_file_capped(dir / "fifo", 1 << 20, "--previous"),
                    Catch::Contains("a FIFO (named pipe), not a regular file"));
  CHECK_THROWS_WITH(read_file_capped("/dev/zero", 1 << 20, "--matrix"),
                    Catch::StartsWith("--matrix /dev/zero: a character device, not a regular file"));
  CHECK_THROWS_WITH(read_file_capped(dir, 1 << 20, "--x"), Catch::Contains("a directory, not a regular file"));
  CHECK_THROWS_WITH(check_input_file(dir / "fifo", 10, "--x"), Catch::Contains("a FIFO"));
  CHECK_THROWS_WITH(read_file_capped(dir / "missing", 10, "--x"), Catch::Contains("no such file"));
  // A sparse 2 GiB file: refused by its size, nothing read.
  {
    std::ofstream(dir / "sparse") << "";
    std::filesystem::resize_file(dir / "sparse", 2ull << 30);
  }
  CHECK_THROWS_AS(read_file_capped(dir / "sparse", 1 << 20, "--x"), FileTooLarge);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  std::filesystem::remove_all(dir);
}

TEST_CASE("check_output_dir: a link loop or a dangling link is a usage error, make_output_dir creates") {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / ("sb-outdir-links-" + std::to_string(sb::process_id()));
  fs::create_directories(dir);
  fs::create_symlink(dir / "loop", dir / "loop");
  fs::create_symlink(dir / "nowhere", dir / "dangling");
  CHECK_THROWS_WITH(check_output_dir(dir / "loop", "--out"), Catch::Contains("cannot be looked at"));
  CHECK_THROWS_WITH(check_output_dir(dir / "loop" / "sub", "--out"), Catch::Contains("cannot be looked at"));
  CHECK_THROWS_WITH(check_output_dir(dir / "dangling", "--out"), Catch::Contains("is a symbolic link to nothing"));
  CHECK_THROWS_AS(make_output_dir("", "--out"), UsageError);
  make_output_dir(dir / "a" / "b", "--out");
  CHECK(fs::is_directory(dir / "a" / "b"));
  CHECK_THROWS_WITH(check_no_line_break(dir / "x\ny", "--cache-dir"), Catch::Contains("line break"));
  fs::remove_all(dir);
}

TEST_CASE("tree_file: the one link rule of the wheel staging and the sdist") {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / ("sb-tree-file-" + std::to_string(sb::process_id()));
  fs::remove_all(dir);
  fs::create_directories(dir / "tree/a");
  write_file_atomic(dir / "tree/a/file", "x");
  write_file_atomic(dir / "outside", "secret");
  fs::create_symlink("file", dir / "tree/a/in");
  fs::create_symlink("in", dir / "tree/a/in2");  // a chain, still inside
  fs::create_symlink(dir / "outside", dir / "tree/a/out");
  fs::create_symlink("../../outside", dir / "tree/a/out-relative");
  fs::create_symlink("../a", dir / "tree/a/dir");
  fs::create_symlink("loop", dir / "tree/a/loop");
  fs::create_symlink("/dev/zero", dir / "tree/a/dev");
  REQUIRE(::mkfifo((dir / "tree/a/fifo").c_str(), 0600) == 0);
  const fs::path root = dir / "tree";
  CHECK(tree_file(root, root / "a/file") == root / "a/file");
  CHECK(tree_file(root, root / "a/in") == fs::canonical(root / "a/file"));
  CHECK(tree_file(root, root / "a/in2") == fs::canonical(root / "a/file"));
  CHECK_FALSE(tree_file(root, root / "a/fifo"));
  CHECK_FALSE(tree_file(root, root / "a"));
  CHECK_THROWS_WITH(tree_file(root, root / "a/out"), Catch::Contains("leaves the tree"));
  CHECK_THROWS_WITH(tree_file(root, root / "a/out-relative"), Catch::Contains("leaves the tree"));
  CHECK_THROWS_WITH(tree_file(root, root / "a/dir"), Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(tree_file(root, root / "a/loop"), Catch::Contains("cannot be resolved"));
  CHECK_THROWS_WITH(tree_file(root, root / "a/dev"), Catch::Contains("leaves the tree"));
  fs::remove_all(dir);
}
#endif
