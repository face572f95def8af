// PosixProcessRunner and find_program for POSIX hosts (process.h).
#include "sagebuild/run/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern char** environ;

// How a child that must start in another directory is started.  glibc >= 2.29
// has posix_spawn_file_actions_addchdir_np; older ones (manylinux_2_28's glibc
// 2.28, where release wheels are built) do not, and there the child is forked
// and changes directory itself before exec.  A chdir in the parent around a
// spawn would not do, even under a lock: the working directory is the whole
// process's, and every other thread's relative paths would move with it.
// SB_SPAWN_FORK_EXEC=1 forces the fork path (its unit tests build it so).
#ifndef SB_SPAWN_FORK_EXEC
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
#define SB_SPAWN_FORK_EXEC 0
#else
#define SB_SPAWN_FORK_EXEC 1
#endif
#endif

namespace sb::run {

namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
};

// The child's environment: ours with the overrides applied.
std::vector<std::string> make_env(const Command& cmd) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : cmd.env) {
    if (v)
      env[k] = *v;
    else
      env.erase(k);
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::string path_of(const Command& cmd) {
  auto it = cmd.env.find("PATH");
  if (it != cmd.env.end() && it->second) return *it->second;
  const char* p = std::getenv("PATH");
  return p ? p : "/usr/bin:/bin";
}

// Starts `exe` with stdin from /dev/null, stdout and stderr on the pipes'
// write ends, in `cwd` when not empty.  Returns 0 or an errno value.
#if SB_SPAWN_FORK_EXEC
// fork, then in the child only async-signal-safe calls (open, dup2, chdir,
// execve, write, _exit: what POSIX allows after fork in a threaded process);
// everything it needs was built before the fork.  A failed chdir or exec
// sends its errno back through a close-on-exec pipe, which an exec that
// succeeds closes with nothing written.
int start_child(pid_t& pid, const char* exe, char* const argv[], char* const envp[], const std::string& cwd, int out_fd,
                int err_fd) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return errno;
  pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(report[0]);
    ::close(report[1]);
    return e;
  }
  if (pid == 0) {
    int in = ::open("/dev/null", O_RDONLY);
    int e = 0;
    if (in < 0 || ::dup2(in, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0)
      e = errno;
    else if (!cwd.empty() && ::chdir(cwd.c_str()) != 0)
      e = errno;
    else
      ::execve(exe, argv, envp);
    if (e == 0) e = errno;
    ssize_t ignored = ::write(report[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  ::close(report[1]);
  int child_errno = 0;
  ssize_t got;
  while ((got = ::read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof child_errno)) {
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return child_errno;
  }
  return 0;
}
#else
int start_child(pid_t& pid, const char* exe, char* const argv[], char* const envp[], const std::string& cwd, int out_fd,
                int err_fd) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  int rc = ::posix_spawn(&pid, exe, &fa, nullptr, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}
#endif

}  // namespace

std::optional<std::filesystem::path> find_program(const std::string& name, const std::string& path_env) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0) return std::filesystem::path(name);
    return std::nullopt;
  }
  std::size_t start = 0;
  while (start <= path_env.size()) {
    auto colon = path_env.find(':', start);
    std::string dir = path_env.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir.assign(1, '.');  // (not = ".": GCC 12 warns falsely -Wrestrict)
    std::filesystem::path candidate = std::filesystem::path(dir) / name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return std::nullopt;
}

std::optional<std::filesystem::path> find_program(const std::string& name) {
  const char* p = std::getenv("PATH");
  return find_program(name, p ? p : "");
}

Result PosixProcessRunner::run(const Command& cmd) {
  Result r;
  auto t0 = std::chrono::steady_clock::now();
  if (cmd.windows_command_line) {
    r.err = "a Windows command line (" + *cmd.windows_command_line + ") cannot run on a POSIX host";
    return r;
  }
  if (cmd.argv.empty()) {
    r.err = "empty command";
    return r;
  }
  auto exe = find_program(cmd.argv[0], path_of(cmd));
  if (!exe) {
    r.err = "program not found: " + cmd.argv[0];
    return r;
  }
  Pipe out, err;
  if (::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0) {
    r.err = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  std::vector<std::string> env = make_env(cmd);
  std::vector<char*> argv, envp;
  for (const auto& a : cmd.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  pid_t pid = -1;
  int rc = start_child(pid, exe->c_str(), argv.data(), envp.data(), cmd.cwd.string(), out.fd[1], err.fd[1]);
  if (rc != 0) {
    r.err = "cannot start " + exe->string() + ": " + std::strerror(rc);
    return r;
  }
  r.spawned = true;
  ::close(out.fd[1]);
  out.fd[1] = -1;
  ::close(err.fd[1]);
  err.fd[1] = -1;

  // Drain both pipes until both reach EOF.
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  FILE* echo[2] = {stdout, stderr};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    int n = ::poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(got));
        if (cmd.stream_output && cmd.on_output) {
          cmd.on_output(std::string_view(buf, static_cast<std::size_t>(got)), i == 1);
        } else if (cmd.stream_output) {
          std::fwrite(buf, 1, static_cast<std::size_t>(got), echo[i]);
          std::fflush(echo[i]);
        }
      } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.exit_code = 128 + WTERMSIG(status);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace sb::run
