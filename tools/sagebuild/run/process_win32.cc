// WindowsProcessRunner and find_program for Windows hosts (process.h).
//
// The rules are pure functions tested on Linux: the command line
// (run/win_cmdline.h), the environment block (run/win_env.h) and
// the PATH search (run/win_path.h).  What is left here is the Win32
// calls.  process_win32_test.cc runs this file as a Windows program against
// a child that reports what it received.
#if !defined(_WIN32)
#error "process_win32.cc is the Windows process runner; POSIX hosts build process_posix.cc"
#endif

#ifndef NOMINMAX
#define NOMINMAX
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <cstdio>
#include <cwchar>
#include <functional>
#include <mutex>
#include <thread>

#include "sagebuild/common/error.h"
#include "sagebuild/run/process.h"
#include "sagebuild/run/win_cmdline.h"
#include "sagebuild/run/win_path.h"

namespace sb::run {

namespace {

// CreateProcess's limit for lpCommandLine, the terminating NUL included.
constexpr std::size_t kMaxCommandLine = 32767;

std::wstring widen(std::string_view s) {
  if (s.empty()) return {};
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), nullptr, 0);
  if (n <= 0)
    throw UsageError("'" + std::string(s) +
                     "' is not valid UTF-8; expected UTF-8 text for a Windows path, "
                     "argument or environment value");
  std::wstring w(static_cast<std::size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), w.data(), n);
  return w;
}

std::string narrow(std::wstring_view w) {
  if (w.empty()) return {};
  int n = WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0, nullptr, nullptr);
  std::string s(static_cast<std::size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr, nullptr);
  return s;
}

std::string error_text(DWORD code) {
  wchar_t* buf = nullptr;
  DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                           nullptr, code, 0, reinterpret_cast<wchar_t*>(&buf), 0, nullptr);
  std::string text = n ? narrow(std::wstring_view(buf, n)) : std::string();
  if (buf) LocalFree(buf);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '.'))
    text.pop_back();
  return (text.empty() ? "Windows error" : text) + " (error " + std::to_string(code) + ")";
}

run::Environment current_environment() {
  std::vector<std::string> entries;
  wchar_t* block = GetEnvironmentStringsW();
  if (!block) return {};
  for (const wchar_t* p = block; *p; p += std::wcslen(p) + 1) entries.push_back(narrow(p));
  FreeEnvironmentStringsW(block);
  return run::environment_from_entries(entries);
}

// NAME=VALUE\0 ... \0 and a final \0, in UTF-16; an empty environment is
// two NULs.
std::wstring environment_block(const run::Environment& env) {
  std::wstring block;
  for (const auto& entry : run::environment_block_entries(env)) {
    block += widen(entry);
    block += L'\0';
  }
  if (block.empty()) block += L'\0';
  block += L'\0';
  return block;
}

bool is_file(const std::string& path) {
  DWORD a = GetFileAttributesW(widen(path).c_str());
  return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

bool ends_with_icase(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && run::win_iequals(std::string_view(s).substr(s.size() - suffix.size()), suffix);
}

// The program CreateProcess is to start: argv[0] on the child's PATH.
std::optional<std::string> resolve_program(const std::string& name, const run::Environment& env) {
  const std::string* path = env.get("PATH");
  auto found = run::win_search_path(name, path ? *path : "", {".exe", ".com"}, is_file);
  if (!found) return std::nullopt;
  if (is_file(*found)) return found;
  if (is_file(*found + ".exe")) return *found + ".exe";  // "C:\x\nvcc" names nvcc.exe
  return std::nullopt;
}

struct Handle {
  HANDLE h = nullptr;
  Handle() = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset() {
    if (h && h != INVALID_HANDLE_VALUE) CloseHandle(h);
    h = nullptr;
  }
};

// Reads until every writer has closed the pipe (ReadFile then fails with
// ERROR_BROKEN_PIPE); when the command streams, hands each chunk to its
// on_output (one thread at a time: `lock` is shared by both pipes' readers)
// or echoes it to `echo`.
void drain(HANDLE pipe, std::string* sink, const Command& cmd, std::FILE* echo, std::mutex& lock) {
  char buf[65536];
  DWORD got = 0;
  while (ReadFile(pipe, buf, sizeof buf, &got, nullptr)) {
    sink->append(buf, got);
    if (!cmd.stream_output || !got) continue;
    if (cmd.on_output) {
      std::lock_guard<std::mutex> hold(lock);
      cmd.on_output(std::string_view(buf, got), echo == stderr);
    } else {
      std::fwrite(buf, 1, got, echo);
      std::fflush(echo);
    }
  }
}

// An anonymous pipe whose write end (only) the child may inherit.
bool child_writes_to(Handle& read, Handle& write, std::string& why) {
  SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, FALSE};
  if (!CreatePipe(&read.h, &write.h, &sa, 0) ||
      !SetHandleInformation(write.h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT)) {
    why = "CreatePipe: " + error_text(GetLastError());
    return false;
  }
  return true;
}

}  // namespace

std::optional<std::filesystem::path> find_program(const std::string& name, const std::string& path_env) {
  auto p = run::win_search_path(name, path_env, {".exe", ".com"}, is_file);
  if (!p || !is_file(*p)) return std::nullopt;
  return std::filesystem::path(widen(*p));
}

std::optional<std::filesystem::path> find_program(const std::string& name) {
  DWORD n = GetEnvironmentVariableW(L"PATH", nullptr, 0);
  std::wstring path(n, L'\0');
  if (n) path.resize(GetEnvironmentVariableW(L"PATH", path.data(), n));
  return find_program(name, narrow(path));
}

Result WindowsProcessRunner::run(const Command& cmd) {
  Result r;
  auto t0 = std::chrono::steady_clock::now();
  std::wstring app, line, env_block, cwd;
  try {
    run::Environment env = run::apply_overrides(base_ ? *base_ : current_environment(), cmd.env);
    std::string narrow_line;
    if (cmd.windows_command_line) {
      // cmd.exe lines (vcvars): CreateProcess finds the first word itself.
      narrow_line = *cmd.windows_command_line;
    } else {
      if (cmd.argv.empty()) {
        r.err = "empty command";
        return r;
      }
      auto exe = resolve_program(cmd.argv[0], env);
      if (!exe) {
        r.err = "program not found: " + cmd.argv[0] + " (looked on the PATH the command runs with)";
        return r;
      }
      if (ends_with_icase(*exe, ".bat") || ends_with_icase(*exe, ".cmd")) {
        r.err = "refusing to run " + *exe +
                " with an argument vector: cmd.exe parses a batch file's arguments again "
                "(see win_cmdline.h); give the command a windows_command_line built with cmd_batch_line()";
        return r;
      }
      app = widen(*exe);
      narrow_line = run::join_command_line(cmd.argv);
    }
    if (narrow_line.size() >= kMaxCommandLine) {
      r.err = "the command line has " + std::to_string(narrow_line.size()) +
              " characters; CreateProcess takes at most " + std::to_string(kMaxCommandLine - 1) + " (" +
              narrow_line.substr(0, 200) + "...)";
      return r;
    }
    line = widen(narrow_line);
    env_block = environment_block(env);
    if (!cmd.cwd.empty()) cwd = cmd.cwd.wstring();
  } catch (const UsageError& e) {
    r.err = e.what();
    return r;
  }

  Handle out_r, out_w, err_r, err_w, nul;
  if (!child_writes_to(out_r, out_w, r.err) || !child_writes_to(err_r, err_w, r.err)) return r;
  SECURITY_ATTRIBUTES inherit{sizeof inherit, nullptr, TRUE};
  nul.h = CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0, nullptr);
  if (nul.h == INVALID_HANDLE_VALUE) {
    r.err = "cannot open NUL for the child's stdin: " + error_text(GetLastError());
    return r;
  }

  // Exactly these three handles are inherited, even when other threads
  // create inheritable handles at the same time (a child holding another
  // child's pipe would keep that pipe open and its reader waiting).
  HANDLE inherited[3] = {nul.h, out_w.h, err_w.h};
  SIZE_T attr_size = 0;
  InitializeProcThreadAttributeList(nullptr, 1, 0, &attr_size);
  std::vector<unsigned char> attr_storage(attr_size);
  auto* attrs = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attr_storage.data());
  if (!InitializeProcThreadAttributeList(attrs, 1, 0, &attr_size)) {
    r.err = "InitializeProcThreadAttributeList: " + error_text(GetLastError());
    return r;
  }
  struct AttrGuard {
    LPPROC_THREAD_ATTRIBUTE_LIST a;
    ~AttrGuard() { DeleteProcThreadAttributeList(a); }
  } attr_guard{attrs};
  if (!UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited, sizeof inherited, nullptr,
                                 nullptr)) {
    r.err = "UpdateProcThreadAttribute: " + error_text(GetLastError());
    return r;
  }

  STARTUPINFOEXW si{};
  si.StartupInfo.cb = sizeof si;
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  si.StartupInfo.hStdInput = nul.h;
  si.StartupInfo.hStdOutput = out_w.h;
  si.StartupInfo.hStdError = err_w.h;
  si.lpAttributeList = attrs;
  PROCESS_INFORMATION pi{};
  BOOL started = CreateProcessW(app.empty() ? nullptr : app.c_str(), line.data(), nullptr, nullptr, TRUE,
                                CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT, env_block.data(),
                                cwd.empty() ? nullptr : cwd.c_str(), &si.StartupInfo, &pi);
  if (!started) {
    DWORD code = GetLastError();
    r.err = "cannot start " + (app.empty() ? narrow(line) : narrow(app)) + ": " + error_text(code);
    return r;
  }
  r.spawned = true;
  Handle process, thread;
  process.h = pi.hProcess;
  thread.h = pi.hThread;
  // Our copies of the child's ends: closed, so that the reads end when the
  // child (and whatever inherited them from it) is gone.
  out_w.reset();
  err_w.reset();
  nul.reset();

  std::mutex output_lock;
  std::thread err_reader(drain, err_r.h, &r.err, std::cref(cmd), stderr, std::ref(output_lock));
  drain(out_r.h, &r.out, cmd, stdout, output_lock);
  err_reader.join();
  WaitForSingleObject(process.h, INFINITE);
  DWORD code = 0;
  GetExitCodeProcess(process.h, &code);
  r.exit_code = static_cast<int>(code);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace sb::run
