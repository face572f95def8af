// The child process_win32_test.cc starts through WindowsProcessRunner: it
// reports what it received (argv, environment, directory, stdin) and makes
// the output and exit codes the test asks for.  Everything it prints is
// written with WriteFile (no C runtime text translation), and strings as hex
// of their UTF-8 bytes, one per line, so the test compares them exactly.
//
//   argv ARG...      the C runtime's wmain argv[2..], one hex line each
//   argv-shell ...   the same from CommandLineToArgvW(GetCommandLineW())
//   env NAME...      NAME=<hex> or NAME unset, per name
//   env-block        every entry of GetEnvironmentStringsW, hex
//   cwd              the current directory, hex
//   stdin            how many bytes stdin held before EOF
//   bytes            fixed bytes on stdout ("a\r\nb\n\0c") and stderr ("err\n")
//   flood N          N times 64 KiB of 'o' to stdout and of 'e' to stderr
//   exit N           ExitProcess(N)
//   write FILE ARG   writes ARG (UTF-8) to FILE, creating it; then the argv lines
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
// shellapi.h needs windows.h first.
#include <shellapi.h>

#include <cwchar>
#include <string>
#include <vector>

namespace {

void put(DWORD which, const std::string& s) {
  HANDLE h = GetStdHandle(which);
  std::size_t done = 0;
  while (done < s.size()) {
    DWORD wrote = 0;
    if (!WriteFile(h, s.data() + done, static_cast<DWORD>(s.size() - done), &wrote, nullptr)) ExitProcess(90);
    done += wrote;
  }
}

void out(const std::string& s) { put(STD_OUTPUT_HANDLE, s); }

std::string utf8(const wchar_t* w, std::size_t n) {
  if (n == 0) return {};
  int len = WideCharToMultiByte(CP_UTF8, 0, w, static_cast<int>(n), nullptr, 0, nullptr, nullptr);
  std::string s(static_cast<std::size_t>(len), '\0');
  WideCharToMultiByte(CP_UTF8, 0, w, static_cast<int>(n), s.data(), len, nullptr, nullptr);
  return s;
}

std::string utf8(const wchar_t* w) { return utf8(w, std::wcslen(w)); }

std::string hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string h;
  for (unsigned char c : s) {
    h += digits[c >> 4];
    h += digits[c & 15];
  }
  return h;
}

}  // namespace

int wmain(int argc, wchar_t** argv) {
  if (argc < 2) return 64;
  std::wstring mode = argv[1];
  if (mode == L"argv") {
    for (int i = 2; i < argc; ++i) out(hex(utf8(argv[i])) + "\n");
  } else if (mode == L"argv-shell") {
    int n = 0;
    wchar_t** words = CommandLineToArgvW(GetCommandLineW(), &n);
    if (!words) return 91;
    for (int i = 2; i < n; ++i) out(hex(utf8(words[i])) + "\n");
    LocalFree(words);
  } else if (mode == L"env") {
    for (int i = 2; i < argc; ++i) {
      DWORD n = GetEnvironmentVariableW(argv[i], nullptr, 0);
      if (n == 0 && GetLastError() == ERROR_ENVVAR_NOT_FOUND) {
        out(utf8(argv[i]) + " unset\n");
        continue;
      }
      std::wstring value(n, L'\0');
      value.resize(GetEnvironmentVariableW(argv[i], value.data(), n));
      out(utf8(argv[i]) + "=" + hex(utf8(value.data(), value.size())) + "\n");
    }
  } else if (mode == L"env-block") {
    wchar_t* block = GetEnvironmentStringsW();
    for (const wchar_t* p = block; *p; p += std::wcslen(p) + 1) out(hex(utf8(p)) + "\n");
    FreeEnvironmentStringsW(block);
  } else if (mode == L"cwd") {
    wchar_t dir[4096];
    DWORD n = GetCurrentDirectoryW(4096, dir);
    out(hex(utf8(dir, n)) + "\n");
  } else if (mode == L"stdin") {
    char buf[4096];
    DWORD got = 0;
    unsigned long long total = 0;
    while (ReadFile(GetStdHandle(STD_INPUT_HANDLE), buf, sizeof buf, &got, nullptr) && got > 0) total += got;
    out(std::to_string(total) + "\n");
  } else if (mode == L"bytes") {
    out(std::string("a\r\nb\n\0c", 7));
    put(STD_ERROR_HANDLE, "err\n");
  } else if (mode == L"flood" && argc == 3) {
    int chunks = _wtoi(argv[2]);
    std::string o(65536, 'o'), e(65536, 'e');
    for (int i = 0; i < chunks; ++i) {
      put(STD_OUTPUT_HANDLE, o);
      put(STD_ERROR_HANDLE, e);
    }
  } else if (mode == L"write" && argc == 4) {
    HANDLE f = CreateFileW(argv[2], GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (f == INVALID_HANDLE_VALUE) return 92;
    std::string text = utf8(argv[3]);
    DWORD wrote = 0;
    WriteFile(f, text.data(), static_cast<DWORD>(text.size()), &wrote, nullptr);
    CloseHandle(f);
  } else if (mode == L"exit" && argc == 3) {
    ExitProcess(static_cast<UINT>(_wtoi(argv[2])));
  } else {
    return 64;
  }
  return 0;
}
